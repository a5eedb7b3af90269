package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestLegateProcess is not a test: run with LEGATE_TEST_MAIN=1, it is the
// legate command itself, so that tests can drive a real `legate stdio`
// process through its standard input and output.
func TestLegateProcess(t *testing.T) {
	if os.Getenv("LEGATE_TEST_MAIN") != "1" {
		t.Skip("the legate process of TestStdioMalformedLines")
	}
	i := 0
	for i < len(os.Args) && os.Args[i] != "--" {
		i++
	}
	os.Args = append([]string{"legate"}, os.Args[min(i+1, len(os.Args)):]...)
	main()
	os.Exit(0)
}

// stdioProc is a running `legate stdio`.
type stdioProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startStdio(t *testing.T) *stdioProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLegateProcess$", "--", "stdio", "--state-dir", t.TempDir(), "--log-level", "warn")
	cmd.Env = append(os.Environ(), "LEGATE_TEST_MAIN=1", "LEGATE_STATE_DIR=")
	cmd.Dir = t.TempDir() // no config.yaml there
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &stdioProc{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return p
}

func (p *stdioProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatalf("writing %q: %v", line, err)
	}
}

// reply is the next message legate writes.
func (p *stdioProc) reply(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatalf("legate stdio ended its output; exit: %v", p.cmd.Wait())
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no reply within 10s")
	}
	return nil
}

// Defect 6 of issue 10: one malformed line ended `legate stdio`. Each is
// answered as JSON-RPC 2.0 asks, and the session goes on.
func TestStdioMalformedLines(t *testing.T) {
	cases := map[string]struct {
		line string
		code int
		id   string
	}{
		"not JSON":            {`this is not json`, -32700, "null"},
		"truncated JSON":      {`{"jsonrpc":"2.0","id":7,"method":"ping"`, -32700, "null"},
		"empty object":        {`{}`, -32600, "null"},
		"empty array":         {`[]`, -32600, "null"},
		"a number":            {`42`, -32600, "null"},
		"object id":           {`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		"fractional id":       {`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
		"jsonrpc 1.0":         {`{"jsonrpc":"1.0","id":9,"method":"ping"}`, -32600, "9"},
		"no jsonrpc":          {`{"id":"x","method":"ping"}`, -32600, `"x"`},
		"method not a string": {`{"jsonrpc":"2.0","id":3,"method":5}`, -32600, "3"},
		"params a string":     {`{"jsonrpc":"2.0","id":4,"method":"ping","params":"p"}`, -32600, "4"},
		"id and nothing else": {`{"jsonrpc":"2.0","id":5}`, -32600, "5"},
		"notification of 1.0": {`{"jsonrpc":"1.0","method":"notifications/initialized"}`, -32600, "null"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := startStdio(t)
			p.send(t, c.line)
			got := p.reply(t)
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			if json.Unmarshal(got["error"], &e) != nil || e.Code != c.code || string(got["id"]) != c.id || string(got["jsonrpc"]) != `"2.0"` {
				t.Fatalf("reply to %q: %s", c.line, mapString(got))
			}
			serves(t, p)
		})
	}
}

// serves checks that the session still initializes and lists tools, and
// that legate exits cleanly when its input ends.
func serves(t *testing.T, p *stdioProc) {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := p.reply(t); string(got["id"]) != "1" || got["result"] == nil {
		t.Fatalf("initialize: %s", mapString(got))
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if got := p.reply(t); string(got["id"]) != "2" || !strings.Contains(string(got["result"]), `"tools"`) {
		t.Fatalf("tools/list: %s", mapString(got))
	}
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("legate stdio exited with %v at the end of its input", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("legate stdio did not exit at the end of its input")
	}
}

func mapString(m map[string]json.RawMessage) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// A batch (protocol 2025-03-26) is answered with one array: the answers to
// its requests and the errors of its malformed members.
func TestStdioBatch(t *testing.T) {
	p := startStdio(t)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := p.reply(t); string(got["id"]) != "1" {
		t.Fatalf("initialize: %s", mapString(got))
	}
	p.send(t, `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"1.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":9,"method":"tools/list"}]`)
	var line string
	select {
	case line = <-p.lines:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the batch")
	}
	var got []struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil || len(got) != 3 ||
		string(got[0].ID) != "7" || got[0].Result == nil ||
		string(got[1].ID) != "8" || got[1].Error == nil || got[1].Error.Code != -32600 ||
		string(got[2].ID) != "9" || !strings.Contains(string(got[2].Result), `"tools"`) {
		t.Fatalf("answer to the batch: %s", line)
	}
}

// A client that writes its requests and closes stdin at once, as
// `printf '...' | legate stdio` does, gets an answer to each request read
// before legate exits.
func TestStdioAnswersEveryRequestBeforeTheEndOfInput(t *testing.T) {
	p := startStdio(t)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"legate__approval_status","arguments":{"approval_id":"nope"}}}`,
	} {
		p.send(t, line)
	}
	p.in.Close()
	ids := map[string]bool{}
	for line := range p.lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["result"] == nil {
			t.Fatalf("answer %q", line)
		}
		ids[string(m["id"])] = true
	}
	if err := p.cmd.Wait(); err != nil || !ids["1"] || !ids["2"] || !ids["3"] || len(ids) != 3 {
		t.Fatalf("answered %v of requests 1, 2 and 3; exit: %v", ids, err)
	}
}
