package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An authenticated principal of `legate serve` asks every tool that could
// hand it a credential: host_env (the token's variable has a name that
// looks like no credential), sh_exec and fs_read of a file holding it, and
// GitHub echoing it into a successful answer. None of the answers, the
// audit log, the server's log or the state directory holds the value.
func TestServeMasksSecretsByValue(t *testing.T) {
	binary(t) // legate serve and the CLI, no peer
	pat := "ghp_" + strings.Repeat("e2eC4n", 6)
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"number":7,"state":"open","title":%q,"user":{"login":"octo"},"html_url":"https://github.example/acme/api/issues/7"}`, r.Header.Get("Authorization"))
	}))
	defer gh.Close()
	dir, ws, state := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the token is "+pat+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`auth:
  tokens: true
connectors:
  - type: host
    config: {workspace_root: %q, allow_shell: true, shell_allowlist: [cat]}
  - type: github
    config: {base_url: %q, allow_private_networks: true, repositories: [acme/api], max_attempts: 1}
    credentials: {token: {env: GH_PAT}}
policy:
  rules:
    - {connector: host, action: allow}
`, ws, gh.URL+"/")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := "GH_PAT=" + pat
	out := legateCLI(t, "token", "create", "mallory", "--config", config, "--state-dir", state)
	token := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	s := serveState(t, config, state, env)

	ctx := t.Context()
	client := mcp.NewClient(&mcp.Implementation{Name: "mallory", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for tool, args := range map[string]map[string]any{
		"host__host_env": {}, "host__sh_exec": {"command": "cat notes.txt"}, "host__fs_read": {"path": "notes.txt"},
		"github__get_issue": {"repo": "acme/api", "number": 7},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		b, _ := json.Marshal(res)
		if res.IsError || !strings.Contains(string(b), "[redacted]") {
			t.Errorf("%s: %s, want a result with the token masked", tool, b)
		}
		if strings.Contains(string(b), pat) {
			t.Errorf("%s hands out the token: %s", tool, b)
		}
	}
	cs.Close()
	var audit []byte
	for range 50 { // the audit is written in the background
		if audit = legateCLI(t, "audit", "query", "-o", "jsonl", "--config", config, "--state-dir", state); strings.Contains(string(audit), "github.get_issue") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(string(audit), "host.host_env") {
		t.Errorf("the audit log has no row of the calls:\n%s", audit)
	}
	for where, b := range map[string][]byte{"the audit log": audit, "the server's log": []byte(s.stderr.String())} {
		if strings.Contains(string(b), pat) {
			t.Errorf("%s holds the token", where)
		}
	}
	filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), pat) {
				t.Errorf("%s holds the token", p)
			}
		}
		return nil
	})
}
