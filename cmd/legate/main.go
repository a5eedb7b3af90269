// Command legate is the Legate MCP gateway: `legate serve` runs it on
// Streamable HTTP, `legate stdio` for desktop clients, and the other
// commands administer it (`legate <noun> <verb>`).
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/cmd/legate/internal/access"
	"github.com/legate-mcp/legate/cmd/legate/internal/agentcmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/approvalscmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/auditcmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/connectcmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/skillscmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/statuscmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/storecmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/upstreamcmd"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/all" // every connector type
	"github.com/legate-mcp/legate/local"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/all" // every store backend
	"github.com/legate-mcp/legate/vault"
)

// globals are the flags every command shares.
type globals struct {
	configPath string
	stateDir   string
	storeURL   string
	logLevel   string
	// follow lets the command use a running server's state (locate); the
	// servers themselves do not.
	follow bool
	loc    *local.Found
	stderr io.Writer
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	if err := root.ExecuteContext(ctx); err != nil {
		var ee exitError
		if !errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "legate:", err)
		}
		os.Exit(1)
	}
}

// exitError makes the command exit non-zero after it printed its own report.
type exitError struct{ msg string }

func (e exitError) Error() string { return e.msg }

func newRoot() *cobra.Command {
	g := &globals{stderr: os.Stderr}
	root := &cobra.Command{
		Use:           "legate",
		Short:         "Legate: one MCP endpoint for every tool an agent is allowed",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate(versionLine() + "\n")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		g.stderr, g.follow = cmd.ErrOrStderr(), cmd.Annotations[ownState] == ""
		if l := new(slog.Level); g.logLevel != "" && l.UnmarshalText([]byte(g.logLevel)) != nil {
			return fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)
		}
		return g.warnElsewhere(cmd)
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", "", "config file (default $LEGATE_CONFIG, then ./config.yaml if it exists, else none)")
	pf.StringVar(&g.stateDir, "state-dir", "", "state directory (default $LEGATE_STATE_DIR, then state_dir from the config, relative to it, then ~/.local/state/legate or the running server's)")
	pf.StringVar(&g.storeURL, "store", "", "store URL, e.g. sqlite:///var/lib/legate/legate.db (default $LEGATE_STORE or $LEGATE_STORE_URL, then sqlite://<state dir>/"+stateFile+")")
	pf.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (default from the config, else info)")
	root.AddCommand(
		storecmd.New(storecmd.Resolver{Config: g.loadConfig, StateDir: g.resolveStateDir, StoreURL: g.resolveStoreURL}), serveCmd(g), stdioCmd(g), toolsCmd(g), connectorCmd(g), upstreamcmd.New(upstreamHooks(g)), approvalscmd.New(approvalsHooks(g)), auditcmd.New(g.auditEnv), configCmd(g), vaultCmd(g), access.TokenCommand(accessHooks(g)), access.UserCommand(accessHooks(g)), versionCmd(), healthCmd(), initCmd(), statuscmd.New(g.statusClient), doctorCmd(g), skillscmd.New(g.skillsDir), agentcmd.New(agentHooks(g)),
		connectcmd.Connect(g.connectRun, readSecret), connectcmd.Connections(g.connectRun),
	)
	return access.Harden(root, accessHooks(g)) // changes need a pinned principal on a hardened deployment
}

// locate finds the configuration, the state directory and the servers
// running, once per command (local.Locate); serve and stdio never follow
// a running server.
func (g *globals) locate() (*local.Found, error) {
	if g.loc != nil {
		return g.loc, nil
	}
	f, err := local.Locate(local.Options{ConfigFlag: g.configPath, StateDirFlag: g.stateDir,
		OwnStore: g.storeURL != "" || store.EnvURL() != "", Follow: g.follow, Say: g.stderr})
	g.loc = f
	return f, err
}

// loadConfig is the command's configuration (see locate).
func (g *globals) loadConfig() (*config.File, error) {
	l, err := g.locate()
	if err != nil {
		return nil, err
	}
	return l.Config, nil
}

// resolveStateDir is the command's state directory (see locate).
func (g *globals) resolveStateDir(*config.File) (string, error) {
	l, err := g.locate()
	if err != nil {
		return "", err
	}
	return l.Place.Dir, nil
}

// stateFile is the embedded store's database in the state directory.
const stateFile = "legate.db"

// resolveStoreURL picks the store: --store, then $LEGATE_STORE (or
// $LEGATE_STORE_URL), then the embedded database in the state directory dir.
func (g *globals) resolveStoreURL(dir string) string {
	switch {
	case g.storeURL != "":
		return g.storeURL
	case store.EnvURL() != "":
		return store.EnvURL()
	}
	return "sqlite://" + filepath.Join(dir, stateFile)
}

// env is what most commands need: the configuration, the state directory,
// the open store and the vault on it (whose keys are read at first use).
type env struct {
	cfg      *config.File
	stateDir string
	storeURL string
	store    store.Store
	vault    *vault.Vault
	log      *slog.Logger
	runner   *agent.Runner // the agent, made at first use
	masks    *vault.Masks  // the secret values masked in results and records, the gateway's and the agent's
}

// open loads the configuration and opens the store; the caller closes it.
func (g *globals) open(ctx context.Context) (*env, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	dir, err := g.resolveStateDir(cfg)
	if err != nil {
		return nil, err
	}
	storeURL := g.resolveStoreURL(dir)
	st, err := store.Open(ctx, storeURL)
	if err != nil {
		return nil, err
	}
	log := g.logger(cfg)
	v := vault.New(st.Secrets(), vault.SourceFromEnv(os.Getenv, dir), &vault.Options{Logger: log})
	return &env{cfg: cfg, stateDir: dir, storeURL: storeURL, store: st, vault: v, log: log, masks: vault.NewMasks()}, nil
}

// gateway builds the gateway on e, serving legate.agent.run when
// agent.model names a model, besides tools; the caller closes it.
func (e *env) gateway(ctx context.Context, tools ...connectors.Builtin) (*server.Gateway, error) {
	r := e.agent()
	if e.cfg.Agent.Model.Model != "" {
		tools = append(tools, r.Builtin())
	}
	gw, err := server.New(ctx, server.Options{Config: e.cfg, Store: e.store, Logger: e.log, Version: version, StateDir: e.stateDir,
		AdminToken: os.Getenv("LEGATE_ADMIN_TOKEN"), PanelAddr: os.Getenv("LEGATE_PANEL_ADDR"), Vault: e.vault, Masks: e.masks, Tools: tools})
	if err == nil {
		r.Server = gw.MCPServer
	}
	return gw, err
}

func (e *env) Close() error { return e.store.Close() }

// withEnv makes a command body that runs with the env open and closes it after.
func (g *globals) withEnv(run func(cmd *cobra.Command, argv []string, e *env) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, argv []string) error {
		e, err := g.open(cmd.Context())
		if err != nil {
			return err
		}
		defer e.Close()
		return run(cmd, argv, e)
	}
}

// auditEnv lends `legate audit` the store and the catalog.
func (g *globals) auditEnv(run func(*cobra.Command, []string, auditcmd.Env) error) func(*cobra.Command, []string) error {
	return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
		return run(cmd, argv, auditcmd.Env{Audit: e.store.Audit(), Canonical: func(ctx context.Context, tool string) (string, error) {
			gw, err := e.gateway(ctx)
			if err != nil {
				return "", err
			}
			defer gw.Close()
			if en, ok := gw.Catalog().Lookup(tool); ok {
				return en.Canonical, nil
			}
			return tool, nil
		}})
	})
}

// withGateway is withEnv for a command that works on the gateway built on
// the env; both are closed when it returns.
func (g *globals) withGateway(run func(cmd *cobra.Command, argv []string, gw *server.Gateway) error) func(*cobra.Command, []string) error {
	return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
		gw, err := e.gateway(cmd.Context())
		if err != nil {
			return err
		}
		defer gw.Close()
		return run(cmd, argv, gw)
	})
}

// connectRun runs a connections command with a gateway, the store and
// the config's principal.
func (g *globals) connectRun(run func(cmd *cobra.Command, argv []string, gw *server.Gateway, st store.Store, principal string) error) func(*cobra.Command, []string) error {
	return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
		gw, err := e.gateway(cmd.Context())
		if err != nil {
			return err
		}
		defer gw.Close()
		return run(cmd, argv, gw, e.store, cmp.Or(e.cfg.Principal, "local"))
	})
}

// logger logs to stderr (stdout belongs to the protocol under stdio).
func (g *globals) logger(cfg *config.File) *slog.Logger {
	level := g.logLevel
	if level == "" && cfg != nil {
		level = cfg.LogLevel
	}
	var l slog.Level // info, unless level says otherwise (checked by config and PersistentPreRunE)
	l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
