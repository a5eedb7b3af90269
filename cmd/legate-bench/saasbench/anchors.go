package saasbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/sqlbench"
)

// P7b: the same read through Legate's native connector and through the
// "anchor", the MCP server people install for that provider instead, on
// the same stand-in, with the same go-sdk client, in the same rounds.

// AnchorTarget is the least ratio of Legate's calls/s to the anchor's;
// Legate's CPU per call must also be lower than the anchor's process's.
const AnchorTarget = 1.0

// AnchorScript installs the anchors, at pinned versions, in AnchorsDir.
const AnchorScript = "scripts/anchors.sh"

// AnchorsDir is where AnchorScript installs the anchors:
// $LEGATE_TOOLS_DIR/anchors, else ~/.cache/legate-tools/anchors.
func AnchorsDir() string {
	if d := os.Getenv("LEGATE_TOOLS_DIR"); d != "" {
		return filepath.Join(d, "anchors")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "legate-tools", "anchors")
}

// anchor is one of them, beside the reader of the same read.
type anchor struct {
	reader string // the reader's name
	server string // the server and its pinned version
	tool   string
	args   map[string]any
	// want is a value the anchor's first answer must hold: the reader's
	// when empty.
	want string
	// same is the read through Legate that matches the anchor's, with its
	// arguments, when it is not the reader's.
	same *struct {
		tool string
		args map[string]any
	}
	// differs is what it does that Legate's call does not, or skips.
	differs string
	// command returns the argv and environment that run it over stdio
	// against the stand-in of e, or why it cannot run here.
	command func(e anchorEnv) (argv, env []string, err error)
}

// anchorEnv is where the anchors run: their directory, the stand-in's
// base URL, the harness's scratch directory, when the stand-in could not
// listen on port 80, why, and the URL of P6's database (sqlbench) or why
// there is none.
type anchorEnv struct {
	dir, base, scratch string
	port80             error
	db                 string
	dbErr              error
}

// node is the Node.js AnchorScript installed the npm anchors with.
func (e anchorEnv) node() string { return filepath.Join(e.dir, "bin", "node") }

// installed returns an error naming the script unless every path, under
// the anchors' directory, is there.
func (e anchorEnv) installed(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(e.dir, p)); err != nil {
			return fmt.Errorf("%s is not installed in %s: run `bash %s`", p, e.dir, AnchorScript)
		}
	}
	return nil
}

// slackPreload is the module Node imports before the Slack server: the
// server calls https://slack.com/api/ with the global fetch and has no
// setting for another base, so this sends those calls to the stand-in
// (LEGATE_BENCH_SLACK_API) — as rewrite does for notionapi's direct calls.
const slackPreload = `const api = "https://slack.com/api/", base = process.env.LEGATE_BENCH_SLACK_API;
const real = globalThis.fetch;
globalThis.fetch = (input, init) =>
  real(typeof input === "string" && input.startsWith(api) ? base + input.slice(api.length) : input, init);
`

// stripePreload is the module Node requires before the Stripe server:
// @stripe/agent-toolkit makes its stripe-node client with no host, port
// or protocol, and stripe-node reads none from the environment, so this
// gives the client's constructor those of the stand-in
// (LEGATE_BENCH_STRIPE_API) — stripe-node's own settings, as the P7
// reader's stripe-go is given the stand-in's URL.
const stripePreload = `const Module = require("node:module");
const u = new URL(process.env.LEGATE_BENCH_STRIPE_API), protocol = u.protocol.slice(0, -1);
const to = { host: u.hostname, port: u.port || (protocol === "http" ? "80" : "443"), protocol };
const real = Module.prototype.require;
let wrapped;
Module.prototype.require = function (id) {
  const m = real.apply(this, arguments);
  if (id !== "stripe") return m;
  if (!wrapped) {
    const Stripe = m.default || m;
    wrapped = function (key, config) { return new Stripe(key, { ...config, ...to }); };
    Object.setPrototypeOf(wrapped, Stripe);
    wrapped.prototype = Stripe.prototype;
    wrapped.default = wrapped.Stripe = wrapped;
  }
  return wrapped;
};
`

// writeScratch writes body as name in e's scratch directory and returns
// its path.
func (e anchorEnv) writeScratch(name, body string) (string, error) {
	path := filepath.Join(e.scratch, name)
	return path, os.WriteFile(path, []byte(body), 0o600)
}

var anchors = []anchor{
	{
		// v0.23.0 is the newest version the Go module proxy serves.
		reader: "github", server: "github-mcp-server v0.23.0", tool: "issue_read",
		args:    map[string]any{"method": "get", "owner": "acme", "repo": "api", "issue_number": 1},
		differs: "the anchor: stdio, no policy, no audit; it sanitizes the title and body (bluemonday) and returns go-github's issue re-encoded as text, no structured content",
		command: func(e anchorEnv) ([]string, []string, error) {
			if err := e.installed("bin/github-mcp-server"); err != nil {
				return nil, nil, err
			}
			if e.port80 != nil {
				return nil, nil, fmt.Errorf("github-mcp-server v0.23.0 drops the port of --gh-host (its parseAPIHost: \"does not handle ports yet\"), so the stand-in must listen on 127.0.0.1:80, and it cannot here (%v): free that port, and run the bench as root or with net.ipv4.ip_unprivileged_port_start at most 80", e.port80)
			}
			return []string{filepath.Join(e.dir, "bin", "github-mcp-server"), "stdio", "--gh-host", "http://127.0.0.1", "--toolsets", "issues", "--read-only"},
				[]string{"GITHUB_PERSONAL_ACCESS_TOKEN=" + token}, nil
		},
	},
	{
		// BASE_URL replaces the servers entry of its OpenAPI description.
		reader: "notion", server: "@notionhq/notion-mcp-server 2.5.2", tool: "API-post-search",
		args: map[string]any{"query": "notes", "page_size": 20, "filter": map[string]any{"property": "object", "value": "page"},
			"sort": map[string]any{"timestamp": "last_edited_time", "direction": "descending"}},
		differs: "the anchor: stdio, no policy, no audit; it passes Notion's answer through as text (JSON.stringify), no paging cursor of its own, no structured content",
		command: func(e anchorEnv) ([]string, []string, error) {
			cli := "node_modules/@notionhq/notion-mcp-server/bin/cli.mjs"
			if err := e.installed("bin/node", cli); err != nil {
				return nil, nil, err
			}
			return []string{e.node(), filepath.Join(e.dir, cli)}, []string{"NOTION_TOKEN=" + notionToken, "BASE_URL=" + e.base}, nil
		},
	},
	{
		reader: "slack", server: "@modelcontextprotocol/server-slack 2025.4.25", tool: "slack_list_channels",
		args:    map[string]any{"limit": 20},
		differs: "the anchor: stdio, no policy, no audit; it passes Slack's answer through as text, no structured content; pointed at the stand-in by a preloaded module rewriting its fetch URLs",
		command: func(e anchorEnv) ([]string, []string, error) {
			index := "node_modules/@modelcontextprotocol/server-slack/dist/index.js"
			if err := e.installed("bin/node", index); err != nil {
				return nil, nil, err
			}
			preload, err := e.writeScratch("slack-standin.mjs", slackPreload)
			if err != nil {
				return nil, nil, err
			}
			return []string{e.node(), "--import", "file://" + preload, filepath.Join(e.dir, index)},
				[]string{"SLACK_BOT_TOKEN=" + token, "SLACK_TEAM_ID=T0BENCH", "LEGATE_BENCH_SLACK_API=" + e.base + "/api/"}, nil
		},
	},
	{
		// 0.2.5 is the last version that runs the tools itself
		// (@stripe/agent-toolkit on stripe-node); 0.3.x only relays
		// stdio to https://mcp.stripe.com, whose Stripe is the real one.
		reader: "stripe", server: "@stripe/mcp 0.2.5", tool: "list_customers",
		args: map[string]any{"email": customerEmail, "limit": 1}, want: customer,
		same: &struct {
			tool string
			args map[string]any
		}{"stripe__list_customers", map[string]any{"email": customerEmail, "limit": 1}},
		differs: "the anchor: stdio, no policy, no audit; it has no tool that reads one customer or lists charges, so both sides list customers by the customer's email, limit 1 (Legate: stripe.list_customers) — one GET /v1/customers?email= — the anchor returning only the id as text (any error as the text \"Failed to list customers\"), no structured content; stripe-node pointed at the stand-in by a preloaded module giving its constructor the stand-in's host, port and protocol; @stripe/mcp 0.3.x cannot be: it only relays to https://mcp.stripe.com",
		command: func(e anchorEnv) ([]string, []string, error) {
			index := "node_modules/@stripe/mcp/dist/index.js"
			if err := e.installed("bin/node", index); err != nil {
				return nil, nil, err
			}
			preload, err := e.writeScratch("stripe-standin.cjs", stripePreload)
			if err != nil {
				return nil, nil, err
			}
			return []string{e.node(), "--require", preload, filepath.Join(e.dir, index), "--tools=customers.read"},
				[]string{"STRIPE_SECRET_KEY=" + stripeKey, "LEGATE_BENCH_STRIPE_API=" + e.base}, nil
		},
	},
	{
		// It takes the database URL as its one argument.
		reader: "pg", server: "@modelcontextprotocol/server-postgres 0.6.2", tool: "query",
		args:    map[string]any{"sql": sqlbench.Query},
		differs: "the anchor: stdio, no policy, no audit, no SQL guard (any statement, in BEGIN TRANSACTION READ ONLY; its ROLLBACK not awaited), no statement timeout or row cap; it returns the rows as indented JSON text, without column types or structured content; pg's pool of up to 10 connections, Legate's max_conns the highest C",
		command: func(e anchorEnv) ([]string, []string, error) {
			index := "node_modules/@modelcontextprotocol/server-postgres/dist/index.js"
			if err := e.installed("bin/node", index); err != nil {
				return nil, nil, err
			}
			if e.dbErr != nil {
				return nil, nil, fmt.Errorf("no database for it, as for P6: %w", e.dbErr)
			}
			return []string{e.node(), filepath.Join(e.dir, index), e.db}, nil, nil
		},
	},
}

// pgReader is P6's query (sqlbench) through Legate's postgres instance of
// P7b: the PostgreSQL anchor's reader, which P7 does not measure.
var pgReader = reader{name: "pg", what: "postgres.query of 100 rows", tool: "pg__query",
	args: map[string]any{"sql": sqlbench.Query}, want: sqlbench.Want}

// RunAnchors measures P7b. Without the anchors' directory it skips, with
// a row and a line naming AnchorScript; an anchor that is missing or
// cannot be pointed at the stand-in is skipped alone, saying why.
func RunAnchors(ctx context.Context, o benchkit.Options) ([]benchkit.Row, error) {
	dir := AnchorsDir()
	if _, err := os.Stat(dir); err != nil {
		reason := fmt.Sprintf("the anchors are not installed in %s: run `bash %s` (LEGATE_TOOLS_DIR chooses the cache)", dir, AnchorScript)
		o.Logf("P7b skipped: %s", reason)
		return []benchkit.Row{benchkit.Skip("P7b", reason)}, nil
	}
	// github-mcp-server reaches a GitHub Enterprise host on the scheme's
	// default port only.
	base, stop, port80 := standIn("127.0.0.1:80")
	if port80 != nil {
		var err error
		if base, stop, err = standIn("127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	defer stop()
	cs := o.Upto(8)
	// The PostgreSQL anchor and Legate's postgres instance read a
	// database as P6's; without a server that anchor alone is skipped.
	e := anchorEnv{dir: dir, base: base, scratch: o.Dir, port80: port80}
	pg := ""
	db, drop, err := sqlbench.CreateDatabase(ctx)
	if e.dbErr = err; err == nil {
		defer drop()
		e.db, pg = db.String(), sqlbench.Instance(pgReader.name, db, cs[len(cs)-1])
	}
	lg, sessions, env, end, err := legateOn(ctx, o, "p7b", base, pg, cs[len(cs)-1])
	if err != nil {
		return nil, err
	}
	defer end()
	// The anchors serve one client over stdio: Legate is measured so
	// too, beside its HTTP listener with a session per worker.
	stdio, err := benchkit.StartStdio(ctx, o, "p7b-legate-stdio",
		[]string{o.Legate, "stdio", "--config", filepath.Join(o.Dir, "p7b.yaml"), "--state-dir", filepath.Join(o.Dir, "p7b-stdio-state")}, env)
	if err != nil {
		return nil, err
	}
	defer stdio.Stop()
	legate := func(r reader) []benchkit.Side {
		return []benchkit.Side{{Name: r.name + " through Legate over HTTP", PID: lg.Cmd.Process.Pid, Call: func(ctx context.Context, i int) error {
			_, err := benchkit.Call(ctx, sessions[i], r.tool, r.args)
			return err
		}}, stdio.Side(r.name+" through Legate over stdio", r.tool, r.args)}
	}
	var rows []benchkit.Row
	for _, a := range anchors {
		r := readerNamed(a.reader)
		if a.same != nil {
			r.tool, r.args, r.what = a.same.tool, a.same.args, strings.ReplaceAll(a.same.tool, "__", ".")
		}
		argv, env, err := a.command(e)
		if err != nil {
			o.Logf("P7b %s skipped: %v", a.server, err)
			rows = append(rows, benchkit.Skip("P7b", fmt.Sprintf("%s, %s: %v", r.what, a.server, err)))
			continue
		}
		rs, err := measureAnchor(ctx, o, a, r, argv, env, legate(r), sessions[0], cs)
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// measureAnchor runs a, checks that its first answer and Legate's hold
// the read's value, and measures both sides in rounds.
func measureAnchor(ctx context.Context, o benchkit.Options, a anchor, r reader, argv, env []string, legate []benchkit.Side, first *mcp.ClientSession, cs []int) ([]benchkit.Row, error) {
	srv, err := benchkit.StartStdio(ctx, o, "p7b-"+a.reader, argv, env)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	res, err := benchkit.Call(ctx, srv.Session, a.tool, a.args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.server, err)
	}
	want := a.want
	if want == "" {
		want = r.want
	}
	if err := holds(a.server+" "+a.tool, res.Content, want); err != nil {
		return nil, err
	}
	if res, err = benchkit.Call(ctx, first, r.tool, r.args); err != nil {
		return nil, err
	}
	if err := r.check(res); err != nil {
		return nil, err
	}
	sides := append([]benchkit.Side{srv.Side(a.server, a.tool, a.args)}, legate...)
	m, err := benchkit.Rounds(ctx, o, "P7b", sides, cs)
	if err != nil {
		return nil, err
	}
	var rows []benchkit.Row
	for i, c := range cs {
		note := ""
		if i == 0 {
			note = a.differs
		}
		rows = append(rows, anchorRows(a, r, "HTTP", c, m[c][0], m[c][1], note)...)
		rows = append(rows, anchorRows(a, r, "stdio", c, m[c][0], m[c][2], "")...)
	}
	return rows, nil
}

// anchorRows are the rows of Legate against the anchor at C=c: calls/s
// (≥ AnchorTarget× the anchor's), p50 latency, and CPU per call of each
// side's process (lower than the anchor's).
func anchorRows(a anchor, r reader, transport string, c int, an, lg benchkit.Series, note string) []benchkit.Row {
	ratio := func(f func(benchkit.Series) []float64) float64 { return benchkit.Median(benchkit.Ratios(f(lg), f(an))) }
	row := func(metric, unit string, f func(benchkit.Series) []float64) benchkit.Row {
		return benchkit.Row{Scenario: "P7b", Metric: fmt.Sprintf("%s, %s through Legate over %s, C=%d", metric, r.what, transport, c), Unit: unit,
			Baseline: benchkit.Median(f(an)), Legate: benchkit.Median(f(lg)), Ratio: ratio(f)}
	}
	rate := row("calls/s", "calls/s", func(s benchkit.Series) []float64 { return s.Rate })
	rate.Metric += fmt.Sprintf(" (baseline: %s's %s over stdio)", a.server, a.tool)
	rate.Target, rate.Result, rate.Note = fmt.Sprintf("≥ %.1f× anchor", AnchorTarget), benchkit.PassFail(rate.Ratio >= AnchorTarget), note
	cpu := row("CPU per call", "µs", func(s benchkit.Series) []float64 { return s.CPU })
	cpu.Metric += " (baseline: the anchor's process; Legate: its process)"
	cpu.Target, cpu.Result = "< 1.0× anchor", benchkit.PassFail(cpu.Ratio < 1)
	return []benchkit.Row{rate, row("p50 latency", "µs", func(s benchkit.Series) []float64 { return s.P50 }), cpu}
}

// readerNamed is the reader of that name; the anchors name only readers
// and pgReader.
func readerNamed(name string) reader {
	for _, r := range append(readers[:len(readers):len(readers)], pgReader) {
		if r.name == name {
			return r
		}
	}
	panic("saasbench: no reader " + name)
}

// holds returns an error unless v, encoded as JSON, holds want.
func holds(what string, v any, want string) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), want) {
		return fmt.Errorf("%s: the result lacks %q: %.300s", what, want, b)
	}
	return nil
}
