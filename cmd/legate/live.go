package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/local"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/statedir"
)

// ownState marks, in a command's Annotations, a server command that keeps
// to its own state directory rather than follow a running server's.
const ownState = "legate.own-state"

// liveServer is the admin API of the server running on the command's state
// directory, reached over its socket, deciding as whom; nil when none runs
// there. A command that changes or reads live state goes through it, so
// that the server audits the change and acts on it at once.
func (g *globals) liveServer(as string) (*admin.Client, *local.Record, error) {
	l, err := g.locate()
	if err != nil || l.server == nil {
		return nil, nil, err
	}
	c := local.Client(l.server)
	c.HTTP.Transport = asTransport{as: cliName(as), next: c.HTTP.Transport}
	return c, l.server, nil
}

// cliName is who the command acts as: as, else cli:<user>.
func cliName(as string) string {
	if as != "" {
		return as
	}
	if u, err := user.Current(); err == nil {
		return "cli:" + u.Username
	}
	return "cli"
}

// asTransport names the decider on the local socket.
type asTransport struct {
	as   string
	next http.RoundTripper
}

func (t asTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(server.LocalAsHeader, t.as)
	return t.next.RoundTrip(r)
}

// through says, on stderr, that the command acted through the running
// server rec.
func (g *globals) through(rec *local.Record) {
	fmt.Fprintf(g.stderr, "legate: done through the running server (%s)\n", rec)
}

// direct says, on stderr and before a change, that the command uses the
// store itself because no server runs on its state directory, and names
// the servers that run on others, whose state it does not change.
func (g *globals) direct(verb string) {
	l, err := g.locate()
	if err != nil {
		return
	}
	fmt.Fprintf(g.stderr, "legate: no server runs on the state directory %s (%s): %s its store directly\n", l.place.Dir, l.place.DirBy, verb)
	for _, o := range l.others {
		hint := "--state-dir " + o.StateDir
		if o.Config != "" {
			hint = "--config " + o.Config
		}
		fmt.Fprintf(g.stderr, "legate: note: a server runs on another state directory (%s); it will not see this: to act on its state, pass %s\n", o, hint)
	}
}

// announce makes the server serving gw on listen findable by the legate
// command (package local); a second server on the same state directory
// is served, but not announced.
func announce(ctx context.Context, e *env, gw *server.Gateway, listen string) func() {
	cfgPath := e.cfg.Path
	if cfgPath != "" {
		cfgPath, _ = filepath.Abs(cfgPath)
	}
	rec := local.Record{PID: os.Getpid(), Listen: listen, Config: cfgPath, StateDir: e.stateDir,
		Store: redactedURL(e.storeURL), Version: version, Started: time.Now()}
	reg, _ := statedir.DefaultDir(os.Getenv)
	stop, err := local.Announce(rec, reg, server.LocalAdminHandler(gw, listen))
	if err != nil {
		e.log.Warn("legate commands cannot reach this server", "error", err)
		return func() {}
	}
	context.AfterFunc(ctx, stop)
	return stop
}

// redactedURL is a store URL with its password taken out.
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// skillsDir is the skills library of the command's state directory, where
// the host connector of a server on it reads them.
func (g *globals) skillsDir(cmd *cobra.Command) (string, error) {
	l, err := g.locate()
	if err != nil {
		return "", err
	}
	return filepath.Join(l.place.Dir, "skills"), nil
}

// joinQuery is path with the query q, when q has any value.
func joinQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// removeLive removes the stored kind ("connector" or "upstream") id
// through the running server, reporting whether one runs on the command's
// state; without one it says so, and the caller removes it from the store.
func (g *globals) removeLive(cmd *cobra.Command, kind, id string) (done bool, err error) {
	live, rec, err := g.liveServer("")
	if err != nil {
		return true, err
	}
	if live == nil {
		g.direct("removing from")
		return false, nil
	}
	if err := live.Do(cmd.Context(), http.MethodDelete, "/admin/v1/"+kind+"s/"+url.PathEscape(id), nil, nil); err != nil {
		return true, err
	}
	g.through(rec)
	fmt.Fprintf(cmd.OutOrStdout(), "removed %s %q\n", kind, id)
	return true, nil
}
