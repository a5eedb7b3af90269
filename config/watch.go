package config

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch hands apply the configuration at path ("" for none: the defaults)
// each time the file changes and on each value of hup (SIGHUP), until ctx
// ends. A file that does not load is not handed on; it and an apply that
// fails are logged as refused, the configuration in use going on. The
// directory is watched, not the file: editors and Kubernetes replace the
// file (rename, symlink swap) rather than write it.
func Watch(ctx context.Context, path string, hup <-chan os.Signal, log *slog.Logger, apply func(*File) error) {
	var changed <-chan fsnotify.Event
	var failed <-chan error
	if path != "" {
		w, err := fsnotify.NewWatcher()
		if err == nil {
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
	var settle <-chan time.Time // events come in bursts: load once they stop
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
			reload(path, log, apply)
		case <-hup:
			log.Info("SIGHUP; reloading", "config", path)
			last, _ = os.ReadFile(path)
			reload(path, log, apply)
		}
	}
}

// reload loads path (the defaults for "") and hands it to apply.
func reload(path string, log *slog.Logger, apply func(*File) error) {
	cfg := Default()
	if path != "" {
		var err error
		if cfg, err = Load(path); err != nil {
			log.Error("the new configuration is invalid; the previous one goes on serving", "config", path, "error", err)
			return
		}
	}
	if err := apply(cfg); err != nil {
		log.Error("the new configuration cannot be applied; the previous one goes on serving", "config", path, "error", err)
	}
}

// RestartKeys names the top-level keys that differ between the
// configuration the process started with and cfg, among those a reload
// does not apply.
func RestartKeys(start, cfg *File) []string {
	var keys []string
	sv, cv := reflect.ValueOf(start).Elem(), reflect.ValueOf(cfg).Elem()
	for i := range sv.NumField() {
		f := sv.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || reloaded[name] {
			continue
		}
		if !reflect.DeepEqual(sv.Field(i).Interface(), cv.Field(i).Interface()) {
			keys = append(keys, name)
		}
	}
	return keys
}

// reloaded are the top-level keys a reload applies.
var reloaded = map[string]bool{
	"connectors": true, "upstreams": true, "policy": true, "profiles": true,
	"limits": true, "budgets": true, "call_timeout": true, "tool_names": true,
}
