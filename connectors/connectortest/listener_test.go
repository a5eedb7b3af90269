package connectortest_test

import (
	"net"
	"testing"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

func TestListenerCountsWithoutSleeping(t *testing.T) {
	l := connectortest.NewListener(t)
	if n := l.Connections(t); n != 0 {
		t.Fatalf("%d connections before any dial", n)
	}
	for range 3 {
		conn, err := net.Dial("tcp", l.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	// Counted at once, though the accepting goroutine may not have run yet
	// when the dials returned; the counts' own connections are left out.
	if n := l.Connections(t); n != 3 {
		t.Fatalf("%d connections; want 3", n)
	}
	if n := l.Connections(t); n != 3 {
		t.Fatalf("%d connections on a second count; want 3", n)
	}
}
