// Package saasbench is the harness's scenario P7: a read through each SaaS
// connector — the real binary, a go-sdk client, the whole call path, the
// connector and its client library — against the same library calling the
// same stand-in directly, in the same rounds. The stand-ins answer one
// read each, as the provider would, from memory. It is also scenario P7b
// (anchors.go): the same reads, and P6's query (sqlbench), through Legate
// against the MCP servers people install for those providers instead.
package saasbench

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

// Target is the least ratio of calls/s through Legate to the bound of any
// gateway (benchkit.HopRows): P7's headline. Against the library called
// directly the ratio is reported, not judged: no gateway can pass the
// bound, which is far below the direct read on a stand-in on loopback.
const Target = 0.8

// reader is one connector's read: its instance config and credentials,
// the tool called through Legate with its arguments, and the same read
// through the library directly.
type reader struct {
	name    string            // the connector type, and the instance id
	what    string            // the read, for the table
	config  string            // the instance's config section, a format of the stand-in's URL (%[1]s)
	secrets map[string]string // the instance's credentials, by name; Legate reads them from the environment
	tool    string
	args    map[string]any
	want    string // a value the first result through Legate must hold
	// open returns the direct read: what the library's caller makes once
	// (a client, an access token) is made here; the read itself checks
	// what it got.
	open func(ctx context.Context, base string, hc *http.Client) (func(ctx context.Context) error, error)
	// raw is the request the library makes for the read, as bytes (its URL
	// a path on the stand-in), for the least gateway (benchkit.StartLeast).
	raw benchkit.RawRead
}

// rawOn is r's raw read on the stand-in at base.
func (r reader) rawOn(base string) benchkit.RawRead {
	rr := r.raw
	rr.URL = base + rr.URL
	return rr
}

// env names the environment variable of one of r's credentials.
func (r reader) env(cred string) string {
	return "LEGATE_BENCH_" + strings.ToUpper(r.name+"_"+cred)
}

// config is Legate's configuration of the readers' instances, with the
// list entries of more after them, and the environment that holds their
// credentials.
func config(base, more string) (string, []string) {
	var cfg strings.Builder
	var env []string
	cfg.WriteString("connectors:\n")
	for _, r := range readers {
		fmt.Fprintf(&cfg, "  - id: %s\n    type: %s\n    config: %s\n    credentials: {", r.name, r.name, fmt.Sprintf(r.config, base))
		names := make([]string, 0, len(r.secrets))
		for name := range r.secrets {
			names = append(names, name)
		}
		sort.Strings(names)
		for i, name := range names {
			if i > 0 {
				cfg.WriteString(", ")
			}
			fmt.Fprintf(&cfg, "%s: {env: %s}", name, r.env(name))
			env = append(env, r.env(name)+"="+r.secrets[name])
		}
		cfg.WriteString("}\n")
	}
	cfg.WriteString(more)
	return cfg.String(), env
}

// check returns an error unless res, the first result through Legate,
// holds r.want in its structured content.
func (r reader) check(res *mcp.CallToolResult) error {
	return holds(r.tool+" through Legate", res.StructuredContent, r.want)
}

// legateOn starts Legate (its config written as name.yaml) with its
// connectors on the stand-in at base, and the instances of more (config's),
// and opens n sessions; env is what the config's credentials read, end
// stops both.
func legateOn(ctx context.Context, o benchkit.Options, name, base, more string, n int) (lg *benchkit.Legate, sessions []*mcp.ClientSession, env []string, end func(), err error) {
	cfg, env := config(base, more)
	if lg, err = benchkit.StartLegate(ctx, o, name, cfg, env...); err != nil {
		return nil, nil, nil, nil, err
	}
	if sessions, err = lg.OpenSessions(ctx, n); err != nil {
		lg.Stop()
		return nil, nil, nil, nil, err
	}
	return lg, sessions, env, func() {
		for _, s := range sessions {
			s.Close()
		}
		lg.Stop()
	}, nil
}

// Run measures P7.
func Run(ctx context.Context, o benchkit.Options) ([]benchkit.Row, error) {
	base, stop, err := standIn("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer stop()
	cs := o.Upto(8)
	lg, sessions, _, end, err := legateOn(ctx, o, "p7", base, "", cs[len(cs)-1])
	if err != nil {
		return nil, err
	}
	defer end()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var rows []benchkit.Row
	for _, r := range readers {
		direct, err := r.open(ctx, base, hc)
		if err != nil {
			return nil, fmt.Errorf("%s directly: %w", r.name, err)
		}
		if err := direct(ctx); err != nil {
			return nil, fmt.Errorf("%s directly: %w", r.name, err)
		}
		first, err := benchkit.Call(ctx, sessions[0], r.tool, r.args)
		if err != nil {
			return nil, err
		}
		if err := r.check(first); err != nil {
			return nil, err
		}
		hop, err := benchkit.StartHop(ctx, o, "p7-"+r.name, first)
		if err != nil {
			return nil, err
		}
		hopSessions, err := hop.OpenSessions(ctx, cs[len(cs)-1])
		if err != nil {
			hop.Stop()
			return nil, err
		}
		least, err := benchkit.StartLeast(ctx, o, "p7-"+r.name, first, r.rawOn(base))
		if err != nil {
			hop.Stop()
			return nil, err
		}
		leastSessions, err := least.OpenSessions(ctx, cs[len(cs)-1])
		if err != nil {
			hop.Stop()
			least.Stop()
			return nil, err
		}
		sides := []benchkit.Side{
			{Name: r.name + " directly", Call: func(ctx context.Context, _ int) error { return direct(ctx) }},
			{Name: r.name + " through Legate", Call: func(ctx context.Context, i int) error {
				_, err := benchkit.Call(ctx, sessions[i], r.tool, r.args)
				return err
			}, PID: lg.Cmd.Process.Pid},
			{Name: "the MCP hop alone", Call: func(ctx context.Context, i int) error {
				_, err := benchkit.Call(ctx, hopSessions[i], benchkit.HopTool, nil)
				return err
			}, PID: hop.Cmd.Process.Pid},
			{Name: "the least gateway", Call: func(ctx context.Context, i int) error {
				_, err := benchkit.Call(ctx, leastSessions[i], benchkit.HopTool, nil)
				return err
			}, PID: least.Cmd.Process.Pid},
		}
		res, err := benchkit.Rounds(ctx, o, "P7", sides, cs)
		for _, s := range append(hopSessions, leastSessions...) {
			s.Close()
		}
		hop.Stop()
		least.Stop()
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			rows = append(rows, benchkit.Compare("P7", r.what, c, res[c][0], res[c][1], 0,
				"through Legate (client, call path, connector, library) against the library calling the same stand-in directly")...)
			rows = append(rows, benchkit.HopRows("P7", r.what, c, res[c][0], res[c][2], res[c][1], benchkit.HopTargets{Bound: Target})...)
			rows = append(rows, benchkit.LeastRows("P7", r.what, c, res[c][0], res[c][2], res[c][3], res[c][1])...)
		}
	}
	return rows, nil
}

// Read is one of P7's reads through Legate, for the harness's profile.
type Read struct {
	Name, Tool string
	Args       map[string]any
}

// ProfileSetup starts P7's stand-in and returns Legate's configuration of
// the readers on it, the environment its credentials read, the reads, and
// the stand-in's stop.
func ProfileSetup() (cfg string, env []string, reads []Read, stop func(), err error) {
	base, stop, err := standIn("127.0.0.1:0")
	if err != nil {
		return "", nil, nil, nil, err
	}
	cfg, env = config(base, "")
	for _, r := range readers {
		reads = append(reads, Read{Name: r.name, Tool: r.tool, Args: r.args})
	}
	return cfg, env, reads, stop, nil
}
