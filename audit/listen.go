package audit

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServeOptions are the limits and the guard of Serve's listener.
type ServeOptions struct {
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout bound slow and idle
	// clients (default 10s, 1m and 2m).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// Guard, when set, wraps the handler, given the address bound: the
	// gateway's Host and Origin check.
	Guard func(listen string, next http.Handler) http.Handler
	// Logger, when set, logs the address served.
	Logger *slog.Logger
}

// Serve serves the series at GET /metrics, and nothing else, on addr
// until ctx ends or stop is called; it asks for no credentials, so that a
// scraper needs none (metrics.listen). It returns the address bound, which
// differs from addr for port 0. An empty addr serves nothing.
func (m *Metrics) Serve(ctx context.Context, addr string, opts *ServeOptions) (bound string, stop func(), err error) {
	if addr == "" {
		return "", func() {}, nil
	}
	o := ServeOptions{}
	if opts != nil {
		o = *opts
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics: listening on %s: %w", addr, err)
	}
	bound = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	var h http.Handler = mux
	if o.Guard != nil {
		h = o.Guard(bound, h)
	}
	srv := &http.Server{Handler: h,
		ReadHeaderTimeout: cmp.Or(o.ReadHeaderTimeout, 10*time.Second),
		ReadTimeout:       cmp.Or(o.ReadTimeout, time.Minute),
		IdleTimeout:       cmp.Or(o.IdleTimeout, 2*time.Minute)}
	go srv.Serve(ln)
	if o.Logger != nil {
		o.Logger.Info("legate metrics", "url", "http://"+bound+"/metrics")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		<-ctx.Done()
		c, end := context.WithTimeout(context.Background(), 5*time.Second)
		defer end()
		srv.Shutdown(c)
		close(done)
	}()
	return bound, func() { cancel(); <-done }, nil
}
