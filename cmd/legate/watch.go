package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// watch makes SIGHUP a request to reload instead of the end of the
// process, and applies the config file to gw whenever it changes or
// SIGHUP comes (which also re-reads the store), until ctx ends; the
// returned function stops it.
func watch(ctx context.Context, gw *server.Gateway, e *env) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	go config.Watch(ctx, e.cfg.Path, hup, e.log, func(cfg *config.File) error { return gw.Reload(ctx, cfg) })
	return func() { cancel(); signal.Stop(hup) }
}
