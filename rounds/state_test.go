package rounds

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSealer(t *testing.T) {
	s := NewSealer(time.Minute)
	subject := Subject("alice", "acme", "", "tools/call", "mcp.x.t", "hash")
	want := State{Call: "op-1", Start: 42, Upstream: "round=2;name=Bob", Decision: "approve", Rule: 3, Approval: "ap-1"}
	token := s.Seal(want, subject)
	// The sealed bytes must not hold the state in the clear. (A check of
	// the token's text for "Bob" failed about once in a thousand runs: a
	// random ciphertext's base64 spells a short word now and then.)
	sealed, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, prefix))
	if err != nil {
		t.Fatal(err)
	}
	for _, clear := range []string{"round=2;name=Bob", "approve", `"op-1"`} {
		if bytes.Contains(sealed, []byte(clear)) || strings.Contains(token, clear) {
			t.Fatalf("the state shows what it holds (%q): %s", clear, token)
		}
	}
	got, err := s.Open(token, subject)
	if err != nil || got != want {
		t.Fatalf("Open = %+v, %v; want %+v", got, err, want)
	}
	if s.Seal(want, subject) == token {
		t.Error("two seals of one state are equal: the nonce is not fresh")
	}
	refused := map[string]struct{ token, subject string }{
		"tampered":          {token + "-TAMPERED", subject},
		"a byte changed":    {token[:len(token)-2] + flip(token[len(token)-2]) + token[len(token)-1:], subject},
		"another caller":    {token, Subject("mallory", "acme", "", "tools/call", "mcp.x.t", "hash")},
		"other arguments":   {token, Subject("alice", "acme", "", "tools/call", "mcp.x.t", "other")},
		"not Legate's":      {"round=1", subject},
		"another key":       {NewSealer(time.Minute).Seal(want, subject), subject},
		"empty after stamp": {prefix, subject},
	}
	for name, c := range refused {
		if _, err := s.Open(c.token, c.subject); !errors.Is(err, ErrState) {
			t.Errorf("%s: Open = %v, want ErrState", name, err)
		}
	}
	s.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if _, err := s.Open(token, subject); !errors.Is(err, ErrState) {
		t.Errorf("expired: Open = %v, want ErrState", err)
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestMeta(t *testing.T) {
	client := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/serverInfo":{},"progressToken":7,"user":1}`)
	got := string(Meta(client, "legate-9", false, false))
	want := `{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"legate-9"}`
	if got != want {
		t.Errorf("Meta = %s\nwant %s", got, want)
	}
	// On a session of an earlier protocol: the capabilities, not the protocol.
	got = string(Meta(client, "", true, false))
	want = `{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`
	if got != want {
		t.Errorf("Meta on a session = %s\nwant %s", got, want)
	}
	// The tasks extension is declared to an upstream only where the
	// caller hands its tasks through, and never on a session.
	client = []byte(`{"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{}}}}`)
	without := `{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{}},"sampling":{}}}`
	with := `{"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{}}}}` // as the client wrote it
	for _, c := range []struct {
		onSession, keepTasks bool
		want                 string
	}{{true, false, without}, {false, false, without}, {true, true, without}, {false, true, with}} {
		if got := string(Meta(client, "", c.onSession, c.keepTasks)); got != c.want {
			t.Errorf("Meta of a client of the tasks extension, onSession %v, keepTasks %v = %s\nwant %s", c.onSession, c.keepTasks, got, c.want)
		}
	}
}
