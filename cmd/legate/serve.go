package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

func serveCmd(g *globals) *cobra.Command {
	var listen string
	var allowUnauthenticated bool
	cmd := &cobra.Command{
		Use:         "serve",
		Short:       "Serve MCP over Streamable HTTP at /mcp (and /healthz, /readyz)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ownState: "yes"},
		RunE: func(cmd *cobra.Command, argv []string) error {
			// The address is checked and bound before any state is made, so
			// a serve that cannot start leaves nothing behind.
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			if listen == "" {
				listen = cfg.Listen
			}
			if listen == "" {
				listen = config.DefaultListen
			}
			warning, err := auth.CheckListen(listen, cfg.Auth.Enabled(), cfg.Auth.AllowUnauthenticated || allowUnauthenticated)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return listenError(listen, err)
			}
			defer ln.Close() // closed already when served; not when the start fails
			// What the start makes in the state directory (database, vault
			// key) is removed again if it fails before serving: a config
			// that fails only when the gateway is built leaves nothing behind.
			undo := g.newState(cfg)
			serving := false
			defer func() {
				if !serving {
					undo()
				}
			}()
			return g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
				ctx := cmd.Context()
				if warning != "" {
					e.log.Warn(warning)
				}
				if w := cfg.PerUserUnhardened(); w != "" {
					e.log.Warn(w)
				}
				if err := e.vault.LoadKeys(); err != nil { // a bad key fails the start, not the first call
					return err
				}
				gw, err := e.gateway(ctx)
				if err != nil {
					return err
				}
				defer gw.Close()
				gw.Start(ctx)
				defer watch(ctx, gw, e)()
				defer announce(ctx, e, gw, ln.Addr().String())()
				e.log.Info("legate serving", "mcp", "http://"+ln.Addr().String()+"/mcp", "tools", gw.Catalog().Len(),
					"config", orNone(e.cfg.Path), "state_dir", e.stateDir, "version", version)
				serving = true
				err = gw.ServeHTTP(ctx, ln)
				e.log.Info("legate stopped")
				return err
			})(cmd, argv)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on (default from the config, else "+config.DefaultListen+")")
	cmd.Flags().BoolVar(&allowUnauthenticated, "allow-unauthenticated", false,
		"listen beyond loopback without authentication (as auth.allow_unauthenticated); anyone who reaches the port can call every tool")
	return cmd
}

// listenError explains a listen that failed: an address in use is most
// often a Legate already running.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen %s: %w — is Legate already running? (legate status) Or choose another address with --listen or listen: in the config", addr, syscall.EADDRINUSE)
	}
	return fmt.Errorf("listen %s: %w", addr, err)
}

// newState notes which of the files a start may make — the embedded
// database (with its journal files), the vault key file, the state
// directory and the database's directory — exist now, and returns the
// function that removes those of them made since. It removes nothing
// else: a directory only if empty, never a file it did not name.
func (g *globals) newState(cfg *config.File) (undo func()) {
	dir, err := g.resolveStateDir(cfg)
	if err != nil {
		return func() {}
	}
	var files, dirs []string
	url := g.resolveStoreURL(dir)
	if !strings.Contains(url, "://") {
		url = store.DefaultScheme + "://" + url // a plain path, as store.Open takes it
	}
	if db, ok := strings.CutPrefix(url, "sqlite://"); ok {
		db, _, _ = strings.Cut(db, "?")
		files = append(files, db, db+"-wal", db+"-shm", db+"-journal")
		dirs = append(dirs, filepath.Dir(db))
	}
	if src := vault.SourceFromEnv(os.Getenv, dir); src.Create {
		files = append(files, src.File)
	}
	dirs = append(dirs, dir)
	var made []string
	for _, p := range append(files, dirs...) {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			made = append(made, p)
		}
	}
	return func() {
		for _, p := range made { // files first, then their directories
			os.Remove(p)
		}
	}
}

func stdioCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:         "stdio",
		Short:       "Serve MCP over stdin/stdout for desktop clients (logs go to stderr)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ownState: "yes"},
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			ctx := cmd.Context()
			if w := e.cfg.PerUserUnhardened(); w != "" {
				e.log.Warn(w)
			}
			if err := e.vault.LoadKeys(); err != nil {
				return err
			}
			gw, err := e.gateway(ctx)
			if err != nil {
				return err
			}
			defer gw.Close()
			gw.Start(ctx)
			defer watch(ctx, gw, e)()
			return gw.ServeStdio(ctx)
		}),
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
