package connectortest

import (
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// Listener is a TCP listener on 127.0.0.1 that counts the connections made
// to it, for tests that prove an address is refused before any dial.
type Listener struct {
	ln      net.Listener
	done    chan struct{}
	mu      sync.Mutex
	seen    []string        // the peers accepted, in order
	marks   map[string]bool // the peers that are Connections' own
	changed chan struct{}   // closed and replaced at each accept
}

// NewListener listens on a free port of 127.0.0.1 until the test ends,
// when its accepting goroutine is joined.
func NewListener(t testing.TB) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Listener{ln: ln, done: make(chan struct{}), marks: map[string]bool{}, changed: make(chan struct{})}
	go l.accept()
	t.Cleanup(func() {
		ln.Close()
		<-l.done
	})
	return l
}

// Addr is the listener's address, host:port.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Port is the listener's port.
func (l *Listener) Port() string {
	_, port, _ := net.SplitHostPort(l.Addr())
	return port
}

func (l *Listener) accept() {
	defer close(l.done)
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		l.seen = append(l.seen, conn.RemoteAddr().String())
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
		conn.Close()
	}
}

// Connections returns how many connections reached the listener before
// the call. It needs no sleep: it connects once itself and waits until that
// connection is accepted; connections are accepted in the order they were
// made, so every earlier one is counted by then.
func (l *Listener) Connections(t testing.TB) int {
	t.Helper()
	conn, err := net.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatalf("connectortest: dialing the listener: %v", err)
	}
	defer conn.Close()
	mark := conn.LocalAddr().String()
	l.mu.Lock()
	l.marks[mark] = true
	l.mu.Unlock()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		l.mu.Lock()
		i, changed := slices.Index(l.seen, mark), l.changed
		n := 0
		if i >= 0 {
			for _, peer := range l.seen[:i] {
				if !l.marks[peer] {
					n++
				}
			}
		}
		l.mu.Unlock()
		if i >= 0 {
			return n
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatal("connectortest: the listener did not accept a connection in 10s")
		}
	}
}
