// Package doctor checks what a Legate server needs to run well, without
// I/O to any connector or upstream: the config, the credentials it refers
// to (never reading a value out), the state directory, the vault key, and
// a running server's status and clock. `legate doctor` prints its report.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// The verdicts of a check.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
)

// MaxClockSkew is how far this machine's clock may be from the server's
// before a check fails: tokens, approvals' expiry and audit times depend
// on it.
const MaxClockSkew = 5 * time.Second

// Check is one line of the report.
type Check struct {
	Verdict string // OK, Warn or Fail
	Name    string // what was checked: "config", "state dir", ...
	Detail  string
}

// Options are what the checks look at.
type Options struct {
	// Config is the loaded config; nil with ConfigErr, why it did not load.
	Config    *config.File
	ConfigErr error
	// StateDir is the state directory; "" with StateDirErr.
	StateDir    string
	StateDirErr error
	// Keys is where the vault's key ring comes from.
	Keys vault.KeySource
	// Store, when not nil, adds its connectors and upstreams to the config's.
	Store store.Store
	// Vault, when not nil, resolves {vault: NAME} references.
	Vault *vault.Vault
	// Server, when not nil, is asked for the running server's status.
	Server *admin.Client
	// Getenv defaults to os.Getenv.
	Getenv func(string) string
}

// Report is the checks in order.
type Report []Check

// Failed counts the failed checks.
func (r Report) Failed() int {
	n := 0
	for _, c := range r {
		if c.Verdict == Fail {
			n++
		}
	}
	return n
}

type run struct {
	opts   Options
	report Report
}

func (r *run) add(verdict, name, format string, args ...any) {
	r.report = append(r.report, Check{Verdict: verdict, Name: name, Detail: fmt.Sprintf(format, args...)})
}

// Run makes every check.
func Run(ctx context.Context, opts Options) Report {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	r := &run{opts: opts}
	r.config()
	r.stateDir()
	r.vaultKey()
	r.credentials(ctx)
	if opts.Server != nil {
		r.server(ctx)
	}
	return r.report
}

func (r *run) config() {
	switch cfg := r.opts.Config; {
	case r.opts.ConfigErr != nil || cfg == nil:
		r.add(Fail, "config", "%s", oneLine(fmt.Sprint(r.opts.ConfigErr), 300))
	case cfg.Path == "":
		r.add(OK, "config", "no config file: the defaults")
	default:
		r.add(OK, "config", "%s is valid", cfg.Path)
	}
}

// stateDir checks the state directory is its owner's alone (0700).
func (r *run) stateDir() {
	dir := r.opts.StateDir
	if r.opts.StateDirErr != nil {
		r.add(Fail, "state dir", "%v", r.opts.StateDirErr)
		return
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.add(Warn, "state dir", "%s does not exist yet: the first start creates it", dir)
	case err != nil:
		r.add(Fail, "state dir", "%v", err)
	case !fi.IsDir():
		r.add(Fail, "state dir", "%s is not a directory", dir)
	case fi.Mode().Perm()&0o077 != 0:
		r.add(Warn, "state dir", "%s is mode %04o: others can reach the database and key file; chmod 700 %s", dir, fi.Mode().Perm(), dir)
	default:
		r.add(OK, "state dir", "%s (mode %04o)", dir, fi.Mode().Perm())
	}
}

// vaultKey checks where the key ring comes from and who can read a key
// file, without reading its keys.
func (r *run) vaultKey() {
	src := r.opts.Keys
	if src.Env != "" {
		ring, err := vault.ParseKeyRing(src.Env)
		if err != nil {
			r.add(Fail, "vault key", "%s: %v", src, err)
			return
		}
		r.add(OK, "vault key", "from %s: keys %s (primary %s)", src, ring, ring.Primary())
		return
	}
	fi, err := os.Stat(src.File)
	switch {
	case errors.Is(err, fs.ErrNotExist) && src.Create:
		r.add(Warn, "vault key", "%s does not exist yet: the first secret stored creates it", src)
	case err != nil:
		r.add(Fail, "vault key", "%v", err)
	case fi.Mode().Perm()&0o077 != 0:
		r.add(Fail, "vault key", "%s is mode %04o: anyone who reads it reads every secret; chmod 600 %s", src, fi.Mode().Perm(), src.File)
	case src.Create:
		r.add(Warn, "vault key", "%s lies beside the database it protects: keep it elsewhere (%s) or in %s", src, vault.EnvKeyFile, vault.EnvMasterKey)
	default:
		r.add(OK, "vault key", "%s (mode %04o)", src, fi.Mode().Perm())
	}
}

// credentials checks every credential reference of the connectors, of
// the upstreams (token, headers), of the agent's model and of the tool
// search's embeddings endpoint, and every header_env variable of the
// upstreams resolves, never putting a value in the report.
func (r *run) credentials(ctx context.Context) {
	if r.opts.Config == nil {
		r.add(Warn, "credentials", "not checked: the config does not load")
		return
	}
	insts, ups, err := definitions(ctx, r.opts.Config, r.opts.Store)
	if err != nil {
		r.add(Fail, "credentials", "%v", err)
		return
	}
	failed, n := r.report.Failed(), 0
	resolver := &vault.Resolver{Vault: r.opts.Vault, LookupEnv: func(name string) (string, bool) {
		v := r.opts.Getenv(name)
		return v, v != ""
	}}
	check := func(owner, tenant, what string, ref vault.Ref) {
		n++
		if ref.Vault != "" && r.opts.Vault == nil {
			r.add(Warn, "credentials", "%s: %s: %s not checked: no store or vault key yet", owner, what, ref)
			return
		}
		if _, err := resolver.Resolve(ctx, tenant, ref); err != nil {
			r.add(Fail, "credentials", "%s: %s: %v", owner, what, err)
		}
	}
	for _, in := range insts {
		sets := map[string]map[string]vault.Ref{"": in.Credentials}
		maps.Copy(sets, in.CredentialSets) // set names match IDPattern: never ""
		for _, set := range sortedKeys(sets) {
			for _, name := range sortedKeys(sets[set]) {
				what := name
				if set != "" {
					what = "credential set " + set + ": " + name
				}
				check("connector "+in.ID, in.Tenant, what, sets[set][name])
			}
		}
	}
	for _, u := range ups {
		if u.Config.Token != nil {
			check("upstream "+u.Config.ID, u.Config.Tenant, "token", *u.Config.Token)
		}
		for _, h := range sortedKeys(u.Config.Headers) {
			check("upstream "+u.Config.ID, u.Config.Tenant, "header "+h, u.Config.Headers[h])
		}
		for _, h := range sortedKeys(u.Config.HeaderEnv) {
			n++
			if r.opts.Getenv(u.Config.HeaderEnv[h]) == "" {
				r.add(Fail, "credentials", "upstream %s: header %s: environment variable %s is not set or empty", u.Config.ID, h, u.Config.HeaderEnv[h])
			}
		}
	}
	// The gateway's own: the agent's model key and the tool search's
	// embeddings key, both resolved for no tenant.
	if ref := r.opts.Config.Agent.Model.AccessToken; ref != nil {
		check("agent.model", "", "access_token", *ref)
	}
	if ref := r.opts.Config.Search.EmbeddingsKey; ref != nil {
		check("search", "", "embeddings_key", *ref)
	}
	if r.report.Failed() == failed {
		r.add(OK, "credentials", "%d references resolve (%d connectors, %d upstreams)", n, len(insts), len(ups))
	}
}

// definitions are the connector instances and upstreams of cfg and, when
// st is not nil, of the store.
func definitions(ctx context.Context, cfg *config.File, st store.Store) ([]sources.InstanceDef, []upstream.Def, error) {
	if st == nil {
		var insts []sources.InstanceDef
		for _, c := range cfg.Connectors {
			insts = append(insts, sources.InstanceDef{ID: c.ID, Type: c.Type, Tenant: c.Tenant, Credentials: c.Credentials, CredentialSets: c.CredentialSets})
		}
		var ups []upstream.Def
		for _, c := range cfg.Upstreams {
			ups = append(ups, upstream.Def{Config: c})
		}
		return insts, ups, nil
	}
	insts, err := sources.InstanceDefs(ctx, cfg, st)
	if err != nil {
		return nil, nil, err
	}
	ups, err := sources.UpstreamDefs(ctx, cfg, st)
	return insts, ups, err
}

// server asks the running server for its status and compares clocks. A
// server not running is a warning: the other checks hold without it.
func (r *run) server(ctx context.Context) {
	s, err := r.opts.Server.Status(ctx)
	if err != nil {
		r.add(Warn, "server", "%v", err)
		return
	}
	r.add(OK, "server", "legate %s on %s, up %s, %d upstreams, %d connectors, %d pending approvals",
		s.Version, s.Listen, time.Duration(s.UptimeSeconds)*time.Second, len(s.Upstreams), len(s.Connectors), s.PendingApprovals)
	for _, u := range s.Upstreams {
		switch {
		case u.Circuit != "closed":
			r.add(Warn, "upstream", "%s: circuit %s: %s", u.ID, u.Circuit, oneLine(u.LastError, 200))
		case u.LastError != "":
			r.add(Warn, "upstream", "%s: %s", u.ID, oneLine(u.LastError, 200))
		case len(u.Quarantined) > 0:
			r.add(Warn, "upstream", "%s: quarantined tools %s (legate upstream diff %s)", u.ID, strings.Join(u.Quarantined, ", "), u.ID)
		}
	}
	for _, c := range s.Connectors {
		if c.Status == "degraded" {
			r.add(Warn, "connector", "%s: degraded, circuit %s (legate connector show %s says why)", c.ID, c.Circuit, c.ID)
		}
	}
	r.clock(ctx)
}

// clock compares this machine's clock with the Date of the server's
// /healthz answer.
func (r *run) clock(ctx context.Context) {
	u := strings.TrimSuffix(strings.TrimSuffix(r.opts.Server.URL, "/"), "/mcp") + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		r.add(Warn, "clock", "not compared: %v", err)
		return
	}
	hc := r.opts.Server.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	before := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		r.add(Warn, "clock", "not compared: %v", err)
		return
	}
	resp.Body.Close()
	after := time.Now()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		r.add(Warn, "clock", "not compared: the server sent no Date")
		return
	}
	// Date has whole seconds: one more is allowed beside the round trip.
	skew := date.Sub(before.Add(after.Sub(before) / 2))
	if skew.Abs() > MaxClockSkew+time.Second {
		r.add(Fail, "clock", "this machine's clock is %s from the server's", skew.Round(time.Second))
		return
	}
	r.add(OK, "clock", "within %s of the server's", MaxClockSkew)
}

// sortedKeys returns m's keys in order, for a stable report.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// oneLine is s on one line, cut to n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n-3] + "..."
	}
	return s
}
