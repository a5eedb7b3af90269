package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/vault"
)

// KeyValues parses the KEY=VALUE values of a repeatable flag, each value
// read as YAML.
func KeyValues(flag string, kvs []string) (map[string]any, error) {
	out := map[string]any{}
	for _, kv := range kvs {
		key, val, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("--%s %q: want KEY=VALUE", flag, kv)
		}
		var v any
		if err := yaml.Unmarshal([]byte(val), &v); err != nil {
			return nil, fmt.Errorf("--%s %s: invalid value: %w", flag, key, err)
		}
		out[key] = v
	}
	return out, nil
}

// ConnectorAccess is the stored access of a connector instance from the
// flags of `legate connector add`: --credentials-mode and the --oauth
// KEY=VALUE pairs of its OAuth app (client_secret=env:VAR|file:PATH|
// vault:NAME, scopes=a,b), or --user-credential. The store's checks
// (sources.StoredDef) follow.
func ConnectorAccess(mode string, oauth []string, userCredential string) (json.RawMessage, error) {
	a := sources.Access{CredentialsMode: mode, UserCredential: userCredential}
	if len(oauth) > 0 {
		m, err := KeyValues("oauth", oauth)
		if err != nil {
			return nil, err
		}
		if s, ok := m["client_secret"].(string); ok {
			ref, err := vault.ParseRef(s)
			if err != nil {
				return nil, fmt.Errorf("--oauth client_secret: %w", err)
			}
			m["client_secret"] = ref
		}
		if s, ok := m["scopes"].(string); ok {
			m["scopes"] = strings.Split(s, ",")
		}
		b, _ := json.Marshal(m)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a.OAuth); err != nil {
			return nil, fmt.Errorf("--oauth: %w (keys: client_id, client_secret, scopes, authorize_url, token_url, revoke_url, redirect_url, credential)", err)
		}
	}
	return json.Marshal(a)
}
