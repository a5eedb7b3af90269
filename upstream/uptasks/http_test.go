package uptasks_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/legate-mcp/legate/upstream/uptasks"
)

// Over HTTP, the tools' task support is read from the tools/list answers
// the go-sdk client receives, as a JSON body or an event stream; other
// answers are left alone, and the body reaches its reader unchanged.
func TestWatchReadsListingsOverHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tool := r.URL.Query().Get("tool")
		answer := []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			answer = []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"` + tool + `","execution":{"taskSupport":"required"}},{"name":"other","execution":{"taskSupport":"optional"}}]}}`)
		}
		if r.URL.Query().Get("sse") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
			io.WriteString(w, "event: message\ndata: "+string(answer)+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer srv.Close()

	tools := uptasks.NewTools("up")
	hc := &http.Client{Transport: tools.Watch(http.DefaultTransport)}
	post := func(query, body string) string {
		t.Helper()
		resp, err := hc.Post(srv.URL+"/mcp?"+query, "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	if got := post("tool=json_task", list); !bytes.Contains([]byte(got), []byte(`"json_task"`)) {
		t.Fatalf("the body reached its reader as %q", got)
	}
	post("tool=sse_task&sse=1", list)
	// A tools/call answered with a result that looks like a listing is
	// no listing.
	post("tool=called", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`)
	for name, want := range map[string]bool{"json_task": true, "sse_task": true, "other": false, "called": false} {
		if got := tools.Required(name); got != want {
			t.Errorf("Required(%q) = %v, want %v", name, got, want)
		}
	}
}
