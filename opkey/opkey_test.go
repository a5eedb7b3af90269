package opkey

import (
	"testing"
	"time"

	"github.com/legate-mcp/legate"
)

func TestFor(t *testing.T) {
	k, other := New(), New() // two replicas
	now := time.Unix(1_900_000_000, 0)
	k.now = func() time.Time { return now }
	c := Call{Tenant: "acme", Principal: "alice", Tool: "slack.post_message", ArgsHash: "h1", Class: legate.ClassWrite}
	const w = 10 * time.Minute

	keyed := c
	keyed.ClientKey = "retry-7"
	if a, b := k.For(keyed, w), other.For(keyed, 0); a != b {
		t.Errorf("a client's key gives %q on one replica and %q on another; want one id", a, b)
	}
	for name, change := range map[string]func(*Call){
		"arguments": func(c *Call) { c.ArgsHash = "h2" },
		"principal": func(c *Call) { c.Principal = "mallory" },
		"tenant":    func(c *Call) { c.Tenant = "evil" },
		"tool":      func(c *Call) { c.Tool = "slack.reply_thread" },
	} {
		d := keyed
		change(&d)
		if k.For(d, w) == k.For(keyed, w) {
			t.Errorf("the same key with another %s is the same operation", name)
		}
	}

	first := k.For(c, w)
	now = now.Add(w - time.Second)
	if again := k.For(c, w); again != first {
		t.Errorf("a repeat within the window: %q, want the first call's %q", again, first)
	}
	now = now.Add(2 * time.Second)
	if late := k.For(c, w); late == first {
		t.Errorf("a repeat past the window is the first call's operation")
	}
	if k.For(c, 0) == k.For(c, 0) {
		t.Errorf("with the window off, two calls are one operation")
	}
	read := c
	read.Class = legate.ClassRead
	if k.For(read, w) == k.For(read, w) {
		t.Errorf("two reads are one operation")
	}
}

func TestClientKey(t *testing.T) {
	for v, want := range map[any]string{nil: "", "abc": "abc", float64(7): "7", true: "true"} {
		if got := ClientKey(v); got != want {
			t.Errorf("ClientKey(%v) = %q, want %q", v, got, want)
		}
	}
}
