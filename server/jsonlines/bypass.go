package jsonlines

import (
	"context"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Out is the connection's side of a line Transport.Bypass took.
type Out struct {
	c    *lineConn
	line []byte
}

// bypass offers line to the transport's Bypass, reporting whether it took it.
func (c *lineConn) bypass(line []byte) bool {
	if c.t.Bypass == nil {
		return false
	}
	c.openMu.Lock()
	c.bypassed++
	c.openMu.Unlock()
	if c.t.Bypass(line, &Out{c: c, line: line}) {
		return true
	}
	c.settle()
	return false
}

// settle notes that a bypassed line is answered or handed back.
func (c *lineConn) settle() {
	c.openMu.Lock()
	c.bypassed--
	c.openMu.Unlock()
	select {
	case c.settled <- struct{}{}:
	default:
	}
}

// Write writes one message, the concatenation of parts, and its newline in
// one write.
func (o *Out) Write(parts ...[]byte) error {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return o.c.writeLine(b)
}

// Done says the line has its answer, or is owed none.
func (o *Out) Done() { o.c.settle() }

// HandBack gives the line to the SDK after all (nothing was written for
// it): screened and passed on as if Bypass had not taken it.
func (o *Out) HandBack() {
	msg, reply := screenLine(o.line, false, o.c.t.Max)
	if reply == nil {
		o.c.opened(msg) // owed an answer from now on, before it is counted out
	}
	o.c.settle()
	o.c.serveOne(msg, reply)
}

// Run serves one client on srv over t until it disconnects or ctx ends, as
// mcp.Server.Run does, offering each line to bypass with the session
// (nil until it is connected) and ctx before the SDK sees it
// (Transport.Bypass).
func Run(ctx context.Context, srv *mcp.Server, t *Transport, bypass func(ctx context.Context, ss *mcp.ServerSession, line []byte, out *Out) bool) error {
	var session atomic.Pointer[mcp.ServerSession]
	t.Bypass = func(line []byte, out *Out) bool { return bypass(ctx, session.Load(), line, out) }
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	session.Store(ss)
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		return ctx.Err()
	case err := <-ended:
		return err
	}
}
