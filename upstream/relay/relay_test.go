package relay_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream/relay"
)

// A tapped message is relayed only if it is a progress or a log
// notification, with the upstream's credentials masked however escaped.
func TestNotification(t *testing.T) {
	secrets := legate.NewSecrets("s3cr3t-value")
	progress, log := relay.Notification([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"legate-1","progress":1}}`), secrets)
	if progress == nil || log != nil || progress.ProgressToken != "legate-1" {
		t.Errorf("progress: %+v, %+v", progress, log)
	}
	progress, log = relay.Notification([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"token s3\u0063r3t-value"}}`), secrets)
	if progress != nil || log == nil {
		t.Fatalf("log: %+v, %+v", progress, log)
	}
	if b, _ := json.Marshal(log); strings.Contains(string(b), "s3cr3t-value") {
		t.Errorf("the secret reached the log message: %s", b)
	}
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"notifications/progress","params":{"progressToken":"x","progress":1}}`, // a request, not a notification
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`not json "notifications/`,
	} {
		if progress, log := relay.Notification([]byte(raw), secrets); progress != nil || log != nil {
			t.Errorf("%s: relayed as %+v, %+v", raw, progress, log)
		}
	}
}

// The go-sdk's codes for failures on Legate's side are the upstream's
// failures; any other JSON-RPC error is its answer.
func TestAnswered(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, true},
		{fmt.Errorf("call: %w", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}), false},
		{&jsonrpc.Error{Code: -32003, Message: "client is closing"}, false},
		{&jsonrpc.Error{Code: -32004, Message: "server is closing"}, false},
		{errors.New("connection refused"), false},
	} {
		if got := relay.Answered(c.err); got != c.want {
			t.Errorf("Answered(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
