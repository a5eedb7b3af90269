package main

import (
	"net"

	"github.com/legate-mcp/legate/admin"
)

// statusClient is the admin API legate status asks: url when set, else the
// server on this state directory over its socket, else the address of the
// config, with the admin token.
func (g *globals) statusClient(url, token string) (*admin.Client, error) {
	if url != "" {
		return &admin.Client{URL: url, Token: token}, nil
	}
	live, _, err := g.liveServer("")
	if err != nil || live != nil {
		return live, err
	}
	return &admin.Client{URL: g.serverURL(), Token: token}, nil
}

// serverURL is the base URL of the server the config describes: its listen
// address, a wildcard host asked on loopback.
func (g *globals) serverURL() string {
	listen := "127.0.0.1:8080"
	if cfg, err := g.loadConfig(); err == nil && cfg.Listen != "" {
		listen = cfg.Listen
	}
	if host, port, err := net.SplitHostPort(listen); err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		listen = net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + listen
}
