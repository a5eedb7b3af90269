package google_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// jwtClaims are the claims of a service account's assertion.
type jwtClaims struct {
	Iss, Sub, Scope, Aud string
}

// assertion verifies a JWT assertion signed with the service account's
// key (RS256) and returns its claims.
func (s *standin) assertion(a string) (jwtClaims, bool) {
	parts := strings.Split(a, ".")
	if len(parts) != 3 || s.account == nil {
		return jwtClaims{}, false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return jwtClaims{}, false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(s.account, crypto.SHA256, sum[:], sig) != nil {
		return jwtClaims{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c jwtClaims
	if err != nil || json.Unmarshal(b, &c) != nil {
		return jwtClaims{}, false
	}
	return c, true
}

// privateKeyCanary is in the key's JSON: no result, error or report may
// hold it.
const privateKeyCanary = "canary-key-id-77f3"

// serviceAccount makes a service account's key that s accepts, as its
// JSON.
func serviceAccount(t *testing.T, s *standin) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.account = &key.PublicKey
	s.mu.Unlock()
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "acme", "private_key_id": privateKeyCanary,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": "legate@acme.iam.gserviceaccount.com",
		"client_id": "1234", "token_uri": "https://oauth2.googleapis.com/token"})
	return string(b)
}

func run1(t *testing.T, in *instance, tool, args string, creds connectortest.Creds) (*legate.Result, error) {
	t.Helper()
	tl := toolNamed(t, in, tool)
	return tl.Run(context.Background(), &connectors.Call{Tool: tool, Args: json.RawMessage(args), Credentials: creds,
		Caller: connectors.Caller{Tenant: "t1"}, Key: func() []byte { return in.key }, Operations: in.ops})
}

// A service account's key, with subject, acts as that user: the token
// endpoint gets an assertion signed with the key, for the subject and the
// scopes derived from the toolsets; the API gets the token it issues.
func TestServiceAccountActsAsTheSubject(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(2)
	key := serviceAccount(t, s)
	sa := connectortest.Creds{"service_account_json": key}
	for name, tc := range map[string]struct{ extra, scope string }{
		"every toolset": {"subject: ops@example.com", "https://www.googleapis.com/auth/drive"},
		"read only":     {"subject: ops@example.com\nread_only: true", "https://www.googleapis.com/auth/drive.readonly"},
		"sheets alone":  {"subject: ops@example.com\ntoolsets: [sheets]", "https://www.googleapis.com/auth/spreadsheets https://www.googleapis.com/auth/drive"},
		"sheets reads":  {"subject: ops@example.com\ntoolsets: [sheets]\nread_only: true", "https://www.googleapis.com/auth/spreadsheets.readonly"},
	} {
		t.Run(name, func(t *testing.T) {
			in := build(t, s, "google", tc.extra)
			tool, args := "drive_list_files", `{}`
			if strings.Contains(tc.extra, "sheets") {
				tool, args = "sheets_list_tabs", `{"spreadsheet_id":"sheet-1"}`
			}
			res, err := run1(t, in, tool, args, sa)
			if err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			c := s.claims[len(s.claims)-1]
			s.mu.Unlock()
			if c.Sub != "ops@example.com" || c.Iss != "legate@acme.iam.gserviceaccount.com" || c.Scope != tc.scope || c.Aud != s.srv.URL+"/token" {
				t.Fatalf("claims %+v; want the subject and scope %s", c, tc.scope)
			}
			if b, _ := json.Marshal(res); strings.Contains(string(b), privateKeyCanary) {
				t.Fatal("the result holds the key")
			}
		})
	}
	in := build(t, s, "google", "subject: ops@example.com")
	var lines []string
	err := in.c.Test(connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) }), sa)
	report := strings.Join(lines, "\n")
	if err != nil || !strings.Contains(report, "service account token for ops@example.com at "+s.srv.URL+"/token: ok") ||
		!strings.Contains(report, "scopes the tools need: https://www.googleapis.com/auth/drive") || strings.Contains(report, privateKeyCanary) {
		t.Fatalf("%v\n%s", err, report)
	}
}

// Exactly one of refresh_token and service_account_json: both, neither,
// or a key that is not one, is CONFIG_ERROR naming them, and nothing is
// sent.
func TestOneCredentialKind(t *testing.T) {
	s := newStandin(t)
	key := serviceAccount(t, s)
	in := build(t, s, "google", "subject: ops@example.com")
	for name, c := range map[string]struct {
		creds connectortest.Creds
		want  string
	}{
		"both":    {connectortest.Creds{"service_account_json": key, "refresh_token": refreshToken, "client_secret": clientSecret}, "not both"},
		"neither": {connectortest.Creds{"client_secret": clientSecret}, "give refresh_token"},
		"not a key": {connectortest.Creds{"service_account_json": `{"type":"authorized_user","private_key_id":"` + privateKeyCanary + `"}`},
			"service_account_json: not a service account's JSON key"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := run1(t, in, "drive_list_files", `{}`, c.creds)
			le := wantCode(t, err, legate.CodeConfigError)
			if !strings.Contains(le.Message, c.want) || strings.Contains(fmt.Sprint(err), privateKeyCanary) {
				t.Fatalf("%v; want %q", err, c.want)
			}
		})
	}
	if s.requests("token") != 0 || s.requests("files") != 0 {
		t.Fatalf("%d token, %d API requests; want none", s.requests("token"), s.requests("files"))
	}
}
