package saasbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

func TestRunAnchorsWithoutThemSkipsNamingTheScript(t *testing.T) {
	t.Setenv("LEGATE_TOOLS_DIR", t.TempDir())
	var logged []string
	o := benchkit.Options{Legate: "/nonexistent/legate", Dir: t.TempDir(), Rounds: 1, Warmup: time.Millisecond, Window: time.Millisecond,
		C: []int{1}, Logf: func(f string, args ...any) { logged = append(logged, f) }}
	rows, err := RunAnchors(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Result != "SKIP" || !strings.Contains(rows[0].Metric, "bash "+AnchorScript) {
		t.Fatalf("rows %+v: want one SKIP row naming %s", rows, AnchorScript)
	}
	if rows[0].Legate == rows[0].Legate {
		t.Errorf("a skipped row holds a figure: %v", rows[0].Legate)
	}
	if len(logged) != 1 {
		t.Errorf("logged %q, want one line", logged)
	}
}

func TestAnchorRowsJudgeRateAndCPU(t *testing.T) {
	a, r := anchors[0], readerNamed(anchors[0].reader)
	an := benchkit.Series{Rate: []float64{100, 120}, P50: []float64{10, 10}, CPU: []float64{500, 520}}
	for _, tc := range []struct {
		lg             benchkit.Series
		rate, cpu      string
		rateX, cpuXMax float64
	}{
		{benchkit.Series{Rate: []float64{200, 240}, P50: []float64{5, 5}, CPU: []float64{250, 260}}, "PASS", "PASS", 2, 0.5},
		{benchkit.Series{Rate: []float64{50, 60}, P50: []float64{20, 20}, CPU: []float64{500, 520}}, "FAIL", "FAIL", 0.5, 1},
	} {
		rows := anchorRows(a, r, "HTTP", 8, an, tc.lg, "note")
		if len(rows) != 3 {
			t.Fatalf("%d rows, want 3", len(rows))
		}
		rate, cpu := rows[0], rows[2]
		if rate.Result != tc.rate || rate.Ratio != tc.rateX || rate.Baseline != 110 || !strings.Contains(rate.Metric, a.server) {
			t.Errorf("rate row %+v: want %s at %.1f×", rate, tc.rate, tc.rateX)
		}
		if cpu.Result != tc.cpu || cpu.Ratio != tc.cpuXMax {
			t.Errorf("CPU row %+v: want %s at %.1f×", cpu, tc.cpu, tc.cpuXMax)
		}
	}
}

// The Slack anchor reaches the stand-in only through slackPreload: a
// call of the global fetch to Slack's API must arrive there, path and
// query kept.
func TestSlackPreloadSendsFetchToTheStandIn(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.RequestURI()
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	preload := filepath.Join(t.TempDir(), "preload.mjs")
	if err := os.WriteFile(preload, []byte(slackPreload), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--import", "file://"+preload, "--input-type=module", "-e",
		`const r = await fetch("https://slack.com/api/conversations.list?limit=20"); console.log(await r.text());`)
	cmd.Env = append(os.Environ(), "LEGATE_BENCH_SLACK_API="+srv.URL+"/api/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	if uri := <-got; uri != "/api/conversations.list?limit=20" {
		t.Errorf("the stand-in got %s", uri)
	}
	if !strings.Contains(string(out), `"ok":true`) {
		t.Errorf("node printed %s", out)
	}
}

// anchorNamed is the anchor of that server, by its name's start.
func anchorNamed(t *testing.T, server string) anchor {
	t.Helper()
	for _, a := range anchors {
		if strings.HasPrefix(a.server, server) {
			return a
		}
	}
	t.Fatalf("no anchor %s", server)
	return anchor{}
}

// fakeInstall makes, under a directory of its own, the files the anchors'
// commands look for, as AnchorScript installs them.
func fakeInstall(t *testing.T) anchorEnv {
	t.Helper()
	e := anchorEnv{dir: t.TempDir(), base: "http://127.0.0.1:4242", scratch: t.TempDir(), db: "postgres://postgres@127.0.0.1:5432/legate_bench_x?sslmode=disable"}
	for _, p := range []string{"bin/node", "bin/github-mcp-server", "node_modules/@notionhq/notion-mcp-server/bin/cli.mjs",
		"node_modules/@modelcontextprotocol/server-slack/dist/index.js", "node_modules/@stripe/mcp/dist/index.js",
		"node_modules/@modelcontextprotocol/server-postgres/dist/index.js"} {
		path := filepath.Join(e.dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestEveryAnchorHasItsReader(t *testing.T) {
	for _, a := range anchors {
		r := readerNamed(a.reader) // panics if there is none
		if r.tool == "" || r.want == "" || a.tool == "" || a.differs == "" {
			t.Errorf("%s: reader %+v, tool %q, differs %q", a.server, r, a.tool, a.differs)
		}
	}
}

// Installed, the Stripe anchor runs @stripe/mcp with only the customers'
// read, its key in the environment (not in argv), and stripePreload
// written beside the harness's files, pointing it at the stand-in.
func TestStripeAnchorCommand(t *testing.T) {
	a, e := anchorNamed(t, "@stripe/mcp"), fakeInstall(t)
	argv, env, err := a.command(e)
	if err != nil {
		t.Fatal(err)
	}
	preload := filepath.Join(e.scratch, "stripe-standin.cjs")
	want := []string{e.node(), "--require", preload, filepath.Join(e.dir, "node_modules/@stripe/mcp/dist/index.js"), "--tools=customers.read"}
	if strings.Join(argv, " ") != strings.Join(want, " ") {
		t.Errorf("argv %q, want %q", argv, want)
	}
	if b, err := os.ReadFile(preload); err != nil || string(b) != stripePreload {
		t.Errorf("the preload module: %v, %q", err, b)
	}
	if strings.Join(env, " ") != "STRIPE_SECRET_KEY="+stripeKey+" LEGATE_BENCH_STRIPE_API="+e.base {
		t.Errorf("env %q", env)
	}
	if a.want != customer || a.args["email"] != customerEmail {
		t.Errorf("it must list the reader's customer by email and answer its id: args %v, want %q", a.args, a.want)
	}
}

// Installed, the PostgreSQL anchor runs with the database's URL as its
// argument; without a database it is skipped saying why.
func TestPostgresAnchorCommand(t *testing.T) {
	a, e := anchorNamed(t, "@modelcontextprotocol/server-postgres"), fakeInstall(t)
	argv, env, err := a.command(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) != 3 || argv[0] != e.node() || argv[2] != e.db || len(env) != 0 {
		t.Errorf("argv %q env %q", argv, env)
	}
	if a.args["sql"] != readerNamed(a.reader).args["sql"] {
		t.Errorf("the anchor's query %v is not Legate's", a.args)
	}
	e.dbErr = fmt.Errorf("connection refused (set LEGATE_TEST_POSTGRES_URL to a server's URL)")
	if _, _, err := a.command(e); err == nil || !strings.Contains(err.Error(), "LEGATE_TEST_POSTGRES_URL") {
		t.Errorf("without a database: %v", err)
	}
}

// Not installed, each anchor is skipped naming the script.
func TestAnchorsNotInstalledNameTheScript(t *testing.T) {
	e := anchorEnv{dir: t.TempDir(), base: "http://127.0.0.1:4242", scratch: t.TempDir()}
	for _, a := range anchors {
		if _, _, err := a.command(e); err == nil || !strings.Contains(err.Error(), "bash "+AnchorScript) {
			t.Errorf("%s: %v", a.server, err)
		}
	}
}

// The stand-in lists the customer by its email, checking the key, as
// Stripe does: what the Stripe anchor reads.
func TestStandInListsTheCustomerByEmail(t *testing.T) {
	base, stop, err := standIn("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, tc := range []struct {
		key, email string
		status     int
		has        string
	}{
		{stripeKey, customerEmail, 200, `"id":"` + customer + `"`},
		{stripeKey, "someone@example.com", 200, `"data":[]`},
		{"sk_test_other", customerEmail, 401, "Invalid API Key"},
	} {
		req, _ := http.NewRequest("GET", base+"/v1/customers?limit=1&email="+url.QueryEscape(tc.email), nil)
		req.Header.Set("Authorization", "Bearer "+tc.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || !strings.Contains(string(b), tc.has) {
			t.Errorf("%s, %s: %d %s", tc.key, tc.email, res.StatusCode, b)
		}
	}
}

// stripePreload gives stripe-node's constructor the stand-in's host, port
// and protocol, keeping the rest of its config: a module named stripe
// that records what it was given stands in for stripe-node.
func TestStripePreloadGivesStripeTheStandIn(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "node_modules", "stripe")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := `function Stripe(key, config) { if (!(this instanceof Stripe)) return new Stripe(key, config); this.key = key; this.config = config; }
module.exports = Stripe; module.exports.Stripe = Stripe; module.exports.default = Stripe;`
	preload := filepath.Join(dir, "preload.cjs")
	if err := os.WriteFile(filepath.Join(mod, "index.js"), []byte(fake), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(preload, []byte(stripePreload), 0o600); err != nil {
		t.Fatal(err)
	}
	// The stand-in listens on port 80 where it can (github's anchor),
	// which a URL leaves out; stripe-node would take 443 for none.
	for base, port := range map[string]string{"http://127.0.0.1:4242": "4242", "http://127.0.0.1:80": "80", "http://127.0.0.1": "80"} {
		cmd := exec.Command(node, "--require", preload, "-e",
			`const S = require("stripe").default; const s = new S("sk_test_x", {appInfo: {name: "stripe-mcp"}}); console.log(JSON.stringify([s instanceof S, s.key, s.config]));`)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LEGATE_BENCH_STRIPE_API="+base)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node: %v: %s", err, out)
		}
		want := `[true,"sk_test_x",{"appInfo":{"name":"stripe-mcp"},"host":"127.0.0.1","port":"` + port + `","protocol":"http"}]`
		if strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: node printed %s, want %s", base, out, want)
		}
	}
}

// With the anchors installed, the real stripe-node, under stripePreload,
// reads the stand-in's customer list: the Stripe anchor's whole path to
// the stand-in.
func TestStripePreloadSendsStripeNodeToTheStandIn(t *testing.T) {
	e := anchorEnv{dir: AnchorsDir()}
	if err := e.installed("bin/node", "node_modules/stripe/package.json"); err != nil {
		t.Skip(err)
	}
	base, stop, err := standIn("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	preload := filepath.Join(t.TempDir(), "preload.cjs")
	if err := os.WriteFile(preload, []byte(stripePreload), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.node(), "--require", preload, "-e",
		`const Stripe = require("stripe"); new Stripe(process.env.STRIPE_SECRET_KEY, {maxNetworkRetries: 0}).customers.list({email: process.argv[1], limit: 1})
		  .then(l => console.log(l.data.map(c => c.id).join()), e => { console.error(e.message); process.exit(1); });`, customerEmail)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "LEGATE_BENCH_STRIPE_API="+base, "STRIPE_SECRET_KEY="+stripeKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	if strings.TrimSpace(string(out)) != customer {
		t.Errorf("node printed %s, want %s", out, customer)
	}
}
