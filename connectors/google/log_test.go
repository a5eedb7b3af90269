package google_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
)

// No credential shows in a log: with Google's client library asked to log
// every request (GOOGLE_SDK_GO_LOGGING_LEVEL=debug, which by default
// writes requests and answers to standard error) and the default logger at debug,
// calls that succeed, refresh an expired token, fail, and a connection
// test leave no canary in either.
func TestNoSecretInLogs(t *testing.T) {
	t.Setenv("GOOGLE_SDK_GO_LOGGING_LEVEL", "debug")
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = stderr
	t.Cleanup(func() { os.Stderr = saved })

	s := newStandin(t)
	s.seedFiles(3)
	s.fill("sheet-1", "Sheet1", 3, 2)
	in := build(t, s, "google", "")
	in.call(t, "t1", "drive_list_files", `{}`, "")
	s.expireAll()
	in.call(t, "t1", "sheets_read_range", `{"spreadsheet_id":"sheet-1","range":"Sheet1"}`, "")
	in.call(t, "t1", "sheets_append_row", `{"spreadsheet_id":"sheet-1","range":"Sheet1","values":["x"]}`, "op-1")
	s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
		if op == "file" {
			gerror(w, 403, "refused "+clientSecret+" "+refreshToken, "forbidden", "PERMISSION_DENIED")
			return true
		}
		return false
	}
	in.call(t, "t1", "drive_get_file", `{"file_id":"f00"}`, "")
	in.c.Test(connectors.WithReporter(context.Background(), func(l string) { slog.Info("test", "line", l) }), creds)

	os.Stderr = saved
	written, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	// Google's client logs requests and answers (bodies: user data) when
	// asked to; the connector silences it.
	if len(written) > 0 {
		t.Errorf("Google's client logged to standard error:\n%.500s", written)
	}
	for name, out := range map[string]string{"the default logger": logs.String(), "standard error": string(written)} {
		for _, secret := range []string{"canary5e0d7f1c", "canary-refresh-9a2b3c", "canary-access"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s holds a secret (%s):\n%s", name, secret, out)
			}
		}
	}
	if !strings.Contains(logs.String(), "token refresh") {
		t.Errorf("the logger saw nothing:\n%s", logs.String())
	}
}
