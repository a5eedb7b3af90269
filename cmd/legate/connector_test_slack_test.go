package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// `legate connector test` prints, under each instance, what its test
// checked: for slack, auth.test and the token's scopes against the tools'.
func TestConnectorTestPrintsWhatItChecked(t *testing.T) {
	scopes := "chat:write,channels:read,channels:history"
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
	for _, want := range []string{"ok    slack", "      auth.test: ok, user legate (U1) on team Acme (T1)", "      scopes granted: channels:history, channels:read, chat:write", "chat:write       ok"} {
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
