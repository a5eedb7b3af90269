package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// A serving Legate applies an edited config file without a restart: it
// watches the file, and reloads on SIGHUP too (which also re-reads the
// store). The new file is loaded and checked as at start; one that does
// not load or build is refused whole, logged, and the configuration in use
// goes on serving.

// hangups makes SIGHUP a request to reload instead of the end of the
// process; call it before serving, stop with the returned function.
func hangups() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// watchConfig reloads gw from path ("" for no file) when the file changes
// and on each value of hup, until ctx ends.
func watchConfig(ctx context.Context, gw *server.Gateway, path string, hup <-chan os.Signal, log *slog.Logger) {
	var changed <-chan fsnotify.Event
	var failed <-chan error
	if path != "" {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			// The directory, not the file: editors and Kubernetes replace
			// the file (rename, symlink swap) rather than write it.
			err = w.Add(filepath.Dir(path))
		}
		if err != nil {
			log.Warn("cannot watch the config file; send SIGHUP to reload it", "config", path, "error", err)
		} else {
			defer w.Close()
			changed, failed = w.Events, w.Errors
		}
	}
	last, _ := os.ReadFile(path)
	var settle <-chan time.Time // events come in bursts: reload once they stop
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-failed:
			log.Warn("watching the config file", "error", err)
		case ev := <-changed:
			if ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write|fsnotify.Create) {
				continue
			}
			settle = time.After(100 * time.Millisecond)
		case <-settle:
			settle = nil
			b, err := os.ReadFile(path)
			if err != nil || bytes.Equal(b, last) {
				continue // gone for a moment (replaced), or unchanged
			}
			last = b
			log.Info("config file changed; reloading", "config", path)
			reload(ctx, gw, path, log)
		case <-hup:
			log.Info("SIGHUP; reloading", "config", orNone(path))
			last, _ = os.ReadFile(path)
			reload(ctx, gw, path, log)
		}
	}
}

// reload loads path (the defaults for "") and applies it to gw.
func reload(ctx context.Context, gw *server.Gateway, path string, log *slog.Logger) {
	cfg := config.Default()
	if path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			log.Error("the new configuration is invalid; the previous one goes on serving", "config", path, "error", err)
			return
		}
	}
	if err := gw.Reload(ctx, cfg); err != nil {
		log.Error("the new configuration cannot be applied; the previous one goes on serving", "config", orNone(path), "error", err)
	}
}
