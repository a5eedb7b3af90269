package e2e_test

import (
	"net/http"
	"testing"
)

// TestZeroConfig: "legate serve" with no config file is healthy and real clients list its
// built-in http.request tool under its safe wire name.
func TestZeroConfig(t *testing.T) {
	p := need(t)
	s := serve(t, "")

	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + s.addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %s, want 200 OK", path, resp.Status)
		}
	}

	t.Run("ts-sdk", func(t *testing.T) {
		r, out := p.tsClient(t, nil, "--http", s.url("127.0.0.1"), "--call", "no_such_tool", "{}")
		if !hasAll(r.Tools, "http__request") {
			t.Errorf("tools/list via the TypeScript SDK: got %v, want http__request among them\n%s", r.Tools, out)
		}
		// An unknown tool is a JSON-RPC error (invalid params), not an isError result.
		if len(r.Calls) != 1 || r.Calls[0].Error == nil || r.Calls[0].Error.Code != -32602 {
			t.Errorf("tools/call no_such_tool: want JSON-RPC error -32602\n%s", out)
		}
	})
	t.Run("inspector-cli", func(t *testing.T) {
		tools := p.inspectorTools(t, nil, s.url("localhost"), "--transport", "http")
		if !hasAll(tools, "http__request") {
			t.Errorf("tools/list via inspector-cli: got %v, want http__request among them", tools)
		}
	})
}
