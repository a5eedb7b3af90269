package local

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/statedir"
)

// Found is where a command's configuration and state are, and the servers
// running on them or elsewhere.
type Found struct {
	Config *config.File
	Place  statedir.Place
	// Server is the live server on Place.Dir, nil when none runs there.
	Server *Record
	// Others are the live servers on other state directories.
	Others []*Record
}

// Options are what a command was told.
type Options struct {
	ConfigFlag, StateDirFlag string
	// OwnStore says the store is not the state directory's (--store,
	// $LEGATE_STORE): servers are not looked for.
	OwnStore bool
	// Follow lets a command whose state directory is the default one, with
	// no configuration file or the one a running server serves, use the
	// state of the one server running on this machine (legate serve
	// started from legate init's folder); the servers themselves do not.
	Follow bool
	// Say receives the line that says a running server is followed.
	Say io.Writer
}

// Locate finds the configuration and the state directory in statedir's
// order, and the servers running.
func Locate(o Options) (*Found, error) {
	path, by := statedir.ConfigFile(o.ConfigFlag, os.Getenv)
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	dir, dirBy, err := statedir.Dir(o.StateDirFlag, os.Getenv, cfg.StateDir, cfg.Path)
	if err != nil {
		return nil, err
	}
	f := &Found{Config: cfg, Place: statedir.Place{Config: cfg.Path, ConfigBy: by, Dir: dir, DirBy: dirBy}}
	reg, err := statedir.DefaultDir(os.Getenv)
	if o.OwnStore || err != nil {
		return f, nil
	}
	for _, r := range Running(reg) {
		if r.StateDir == dir {
			f.Server = r
		} else {
			f.Others = append(f.Others, r)
		}
	}
	if f.Server == nil && o.Follow && f.Place.Default() && len(f.Others) == 1 && (path == "" || sameFile(path, f.Others[0].Config)) {
		rec := f.Others[0]
		if f.Config, err = loadConfig(rec.Config); err != nil {
			return nil, fmt.Errorf("the running server's configuration: %w", err)
		}
		f.Server, f.Others = rec, nil
		f.Place = statedir.Place{Config: rec.Config, ConfigBy: "the running server", Dir: rec.StateDir, DirBy: "the running server"}
		if o.Say != nil {
			fmt.Fprintf(o.Say, "legate: using the state of the server running here (%s)\n", rec)
		}
	}
	return f, nil
}

// loadConfig reads the configuration file path; "" is the defaults.
func loadConfig(path string) (*config.File, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// AsHeader names, on the socket, who acts: the legate command sends
// cli:<user>, or its --as.
const AsHeader = "Legate-As"

// Caller is who a command acts as: as, else cli:<user>.
func Caller(as string) string {
	if as != "" {
		return as
	}
	if u, err := user.Current(); err == nil {
		return "cli:" + u.Username
	}
	return "cli"
}

// Client is an admin API client that reaches rec's server over its
// socket, acting as Caller(as).
func Client(rec *Record, as string) *admin.Client {
	dial := (&socketDialer{path: rec.Socket}).dial
	return &admin.Client{URL: "http://legate.sock", HTTP: &http.Client{Transport: asTransport{as: Caller(as), next: &http.Transport{DialContext: dial}}}}
}

// asTransport names who acts on every request.
type asTransport struct {
	as   string
	next http.RoundTripper
}

func (t asTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(AsHeader, t.as)
	return t.next.RoundTrip(r)
}
