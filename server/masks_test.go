package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/legate-mcp/legate/connectors/github"
	_ "github.com/legate-mcp/legate/connectors/host"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
)

// Secrets are masked by their value, whatever their name and whichever
// tool returns them: an environment variable whose name looks like no
// credential (GH_PAT, BASIC_USER) that an instance's credential
// references, shown by host_env; a secret file read with sh_exec and
// fs_read; a provider that echoes the Authorization header it was sent
// into a successful result (GitHub's issue title). None of them reaches
// a result, the audit log or the gateway's log.
func TestSecretsAreMaskedByValueOnEveryPath(t *testing.T) {
	pat := "ghp_" + strings.Repeat("Q7x", 12)
	user, pass := "basic-user-c4n4ry", "basic-pass-c4n4ry-9f1e"
	t.Setenv("GH_PAT", pat)
	t.Setenv("BASIC_USER", user)
	t.Setenv("BASIC_PASS", pass)

	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"number":7,"state":"open","title":%q,"body":"sent with %s","user":{"login":"octo"},"html_url":"https://github.example/acme/api/issues/7"}`,
			r.Header.Get("Authorization"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer gh.Close()

	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "leak.txt"), []byte("token="+pat+"\nuser="+user+" pass="+pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := servertest.Start(t, fmt.Sprintf(`
connectors:
  - type: host
    config: {workspace_root: %q, allow_shell: true, shell_allowlist: [cat]}
  - type: github
    config: {base_url: %q, allow_private_networks: true, repositories: [acme/api]}
    credentials: {token: {env: GH_PAT}}
  - id: api
    type: http
    config: {base_url: "http://127.0.0.1:9/", allow_private_networks: true, auth: basic}
    credentials: {username: {env: BASIC_USER}, password: {env: BASIC_PASS}}
policy:
  rules:
    - {tool: "*", action: allow}
`, ws, gh.URL+"/"))

	canaries := map[string]string{"GH_PAT": pat, "BASIC_USER": user, "BASIC_PASS": pass}
	leaks := func(where string, b []byte) {
		t.Helper()
		for name, v := range canaries {
			for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))} {
				if strings.Contains(string(b), form) {
					t.Errorf("%s shows %s's value: %s", where, name, b)
				}
			}
		}
	}
	ctx := context.Background()
	for _, c := range []struct{ tool, args string }{
		{"host.host_env", `{}`},
		{"host.sh_exec", `{"command":"cat leak.txt"}`},
		{"host.fs_read", `{"path":"leak.txt"}`},
		{"github.get_issue", `{"repo":"acme/api","number":7}`},
	} {
		res, err := g.GW.Call(ctx, c.tool, json.RawMessage(c.args), server.CallOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		b, _ := json.Marshal(res)
		if res.IsError {
			t.Fatalf("%s failed: %s", c.tool, b)
		}
		if !strings.Contains(string(b), "[redacted]") {
			t.Errorf("%s: nothing was masked: %s", c.tool, b)
		}
		leaks(c.tool, b)
	}
	rows, err := g.Store.Audit().Query(ctx, store.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rows)
	leaks("the audit log", b)
	leaks("the gateway's log", []byte(g.Logs.String()))
}
