package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/panel"
	"github.com/legate-mcp/legate/server"
)

// startPanel serves the web panel on its own address (panel.listen or
// $LEGATE_PANEL_ADDR) until ctx ends; without one it does nothing. Logging
// in takes a token, so a server with neither authentication nor an admin
// token cannot start it.
func startPanel(ctx context.Context, gw *server.Gateway, e *env) (stop func(), err error) {
	addr := cmp.Or(os.Getenv("LEGATE_PANEL_ADDR"), e.cfg.Panel.Listen)
	if addr == "" {
		return func() {}, nil
	}
	if !e.cfg.Auth.Enabled() && os.Getenv("LEGATE_ADMIN_TOKEN") == "" {
		return nil, errors.New("the panel needs a token to log in with: set LEGATE_ADMIN_TOKEN or turn on auth:")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("panel: listening on %s: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	h := panel.New(gw.AdminHandler(ln.Addr().String()), &panel.Options{Loopback: host != "" && auth.IsLoopbackHost(host), AllowedHosts: e.cfg.AllowedHosts})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	e.log.Info("legate panel", "url", "http://"+ln.Addr().String()+"/")
	return func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}, nil
}
