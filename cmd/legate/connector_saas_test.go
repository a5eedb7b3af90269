package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `legate connector test` prints, under each instance, what its test
// checked: for slack, auth.test and the token's scopes against the tools'.
func TestConnectorTestPrintsWhatItChecked(t *testing.T) {
	scopes := "chat:write,channels:read,channels:history,users:read,reactions:write"
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/auth.test" || r.FormValue("token") != "xoxb-cli-test" {
			w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
			return
		}
		w.Header().Set("X-OAuth-Scopes", scopes)
		w.Write([]byte(`{"ok":true,"team":"Acme","team_id":"T1","user":"legate","user_id":"U1"}`))
	}))
	defer slack.Close()
	t.Setenv("CLI_SLACK_TOKEN", "xoxb-cli-test")
	cfg := writeConfig(t, "connectors:\n  - type: slack\n    config: {api_url: "+slack.URL+"/api/, allow_private_networks: true}\n    credentials:\n      bot_token: {env: CLI_SLACK_TOKEN}\n")
	flags := []string{"--config", cfg, "--state-dir", t.TempDir()}

	out, err := runCLI(t, append([]string{"connector", "test", "slack"}, flags...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"ok    slack", "      auth.test: ok, user legate (U1) on team Acme (T1)", "      scopes granted: channels:history, channels:read, chat:write, reactions:write, users:read", "chat:write       ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	scopes = "chat:write"
	out, err = runCLI(t, append([]string{"connector", "test"}, flags...)...)
	if err == nil || !strings.Contains(out, "FAIL  slack: PERMISSION_DENIED") || !strings.Contains(out, "channels:read    MISSING") {
		t.Fatalf("missing scopes: %v\n%s", err, out)
	}
	if strings.Contains(out, "xoxb-cli-test") {
		t.Fatalf("the token is printed:\n%s", out)
	}
}

// The slack bot token, echoed back by a careless Slack in its errors,
// shows in no CLI output, log line or stored byte.
func TestSlackTokenNeverShows(t *testing.T) {
	const token = "xoxb-canary-0c4e7a91d2"
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/auth.test":
			w.Header().Set("X-OAuth-Scopes", "chat:write")
			w.Write([]byte(`{"ok":true,"team":"Acme","team_id":"T1","user":"legate","user_id":"U1"}`))
		case "/api/conversations.list":
			w.Write([]byte(`{"ok":false,"error":"invalid_auth for ` + r.FormValue("token") + `"}`))
		default:
			http.Error(w, "refused "+r.FormValue("token"), http.StatusInternalServerError)
		}
	}))
	defer slack.Close()
	t.Setenv("CLI_SLACK_CANARY", token)
	state := t.TempDir()
	cfg := writeConfig(t, "connectors:\n  - type: slack\n    config: {api_url: "+slack.URL+"/api/, allow_private_networks: true, retry_backoff: 1ms}\n    credentials:\n      bot_token: {env: CLI_SLACK_CANARY}\n")
	stderr := swapStderr(t)
	var said []string
	for _, args := range [][]string{
		{"connector", "test", "slack"},
		{"tools", "call", "slack.list_channels", "--args", `{}`},
		{"tools", "call", "slack.read_history", "--args", `{"channel":"channel://QzAw.AAAA"}`},
	} {
		out, err := runCLI(t, append(args, "--config", cfg, "--state-dir", state, "--log-level", "debug")...)
		said = append(said, out)
		if err != nil {
			said = append(said, err.Error())
		}
	}
	if !strings.Contains(strings.Join(said, "\n"), "[redacted]") {
		t.Errorf("the echoed token did not come back masked:\n%s", strings.Join(said, "\n"))
	}
	logs, _ := os.ReadFile(stderr)
	said = append(said, string(logs))
	filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			said = append(said, string(b))
		}
		return nil
	})
	for _, s := range said {
		if strings.Contains(s, "0c4e7a91d2") {
			t.Fatalf("the token shows:\n%s", s)
		}
	}
}

// The same for github: `connector test` prints the login and scopes, and
// the token, echoed back in GitHub's errors, shows nowhere.
func TestGitHubConnectorTestAndTokenNeverShows(t *testing.T) {
	const token = "ghp_canary_5b9e0f3a17"
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"Bad credentials"}`))
			return
		}
		switch r.URL.Path {
		case "/api/v3/user":
			w.Header().Set("X-OAuth-Scopes", "repo")
			w.Write([]byte(`{"login":"legate-bot","id":7}`))
		default:
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"message":"token ` + token + ` may not"}`))
		}
	}))
	defer gh.Close()
	t.Setenv("CLI_GH_CANARY", token)
	state := t.TempDir()
	cfg := writeConfig(t, "connectors:\n  - type: github\n    config: {base_url: "+gh.URL+"/, allow_private_networks: true}\n    credentials:\n      token: {env: CLI_GH_CANARY}\n")
	stderr := swapStderr(t)
	flags := []string{"--config", cfg, "--state-dir", state, "--log-level", "debug"}
	out, err := runCLI(t, append([]string{"connector", "test", "github"}, flags...)...)
	if err != nil || !strings.Contains(out, "ok    github") || !strings.Contains(out, "      GET /user: ok, legate-bot (id 7)") || !strings.Contains(out, "scopes granted: repo") {
		t.Fatalf("connector test: %v\n%s", err, out)
	}
	said := []string{out}
	out, err = runCLI(t, append([]string{"tools", "call", "github.list_issues", "--args", `{"repo":"acme/api"}`}, flags...)...)
	said = append(said, out)
	if err != nil {
		said = append(said, err.Error())
	}
	if !strings.Contains(strings.Join(said, "\n"), "PERMISSION_DENIED") || !strings.Contains(strings.Join(said, "\n"), "[redacted]") {
		t.Errorf("want PERMISSION_DENIED with the echoed token masked:\n%s", strings.Join(said, "\n"))
	}
	logs, _ := os.ReadFile(stderr)
	said = append(said, string(logs))
	filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			said = append(said, string(b))
		}
		return nil
	})
	for _, s := range said {
		if strings.Contains(s, "5b9e0f3a17") {
			t.Fatalf("the token shows:\n%s", s)
		}
	}
}
