package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// runCLISplit runs the CLI in process and returns its standard output and
// standard error apart.
func runCLISplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// listShowNames are the verbs of commands that print what exists; each
// must take -o.
var listShowNames = []string{"list", "show", "types", "diff", "query", "tail", "status"}

// walk calls f on every command below c, with its path without "legate ".
func walk(c *cobra.Command, f func(path string, c *cobra.Command)) {
	for _, sub := range c.Commands() {
		f(strings.TrimPrefix(sub.CommandPath(), "legate "), sub)
		walk(sub, f)
	}
}

// statusServer is a running gateway with no sources and the admin API on.
func statusServer(t *testing.T, token string) string {
	t.Helper()
	return servertest.Start(t, "{}\n", servertest.With(func(o *server.Options) { o.AdminToken, o.Version = token, "v0.0.1" })).URL
}

// Every list and show command takes -o table|json|yaml; json parses, and
// yaml says the same as json; a format it does not print is an error
// naming those it does; the deprecated --json still prints JSON.
func TestEveryListAndShowCommandTakesOutput(t *testing.T) {
	const token = "output-test-token"
	state := t.TempDir()
	flags := []string{"--state-dir", state}
	for _, args := range [][]string{
		{"upstream", "add", "fx", "--no-refresh", "--url", "http://127.0.0.1:1/mcp"},
		{"connector", "add", "web", "--type", "http", "--set", "base_url=http://127.0.0.1:1", "--set", "allow_private_networks=true", "--credential", "token=env:OUTPUT_TEST_TOKEN"},
		{"token", "create", "ci-bot"},
	} {
		if out, _, err := runCLISplit(t, append(args, flags...)...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	st, err := sqlite.Open(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := st.Approvals().Create(context.Background(), &store.Approval{ID: "ap-1", Principal: "p", Tool: "web.call", Class: "write",
		Args: []byte(`{"path":"/x"}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := st.AgentRuns().Put(context.Background(), store.AgentRun{ID: "run-1", Principal: "local", Instruction: "tidy", Stopped: "answered",
		StartedAt: now, Record: []byte(`{"id":"run-1","instruction":"tidy","reply":"done","turns":1,"stopped":"answered","calls":[],"messages":[]}`)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	seedAudit(t, state, store.AuditRow{Time: now, Principal: "p", Tool: "http.request", Outcome: "ok", ArgsHash: "abc"})

	// The arguments each command needs besides -o; a new list or show
	// command must be added here.
	args := map[string][]string{
		"upstream list":    nil,
		"upstream show":    {"fx"},
		"upstream diff":    {"fx"},
		"connector types":  nil,
		"connector list":   nil,
		"connector show":   {"web"},
		"tools list":       nil,
		"tools search":     {"request"},
		"approvals list":   nil,
		"approvals show":   {"ap-1"},
		"audit tail":       nil,
		"audit query":      nil,
		"token list":       nil,
		"skills list":      nil,
		"user list":        nil,
		"vault list":       nil,
		"connections list": nil,
		"store check":      nil,
		"agent history":    nil,
		"agent show":       {"run-1"},
		"status":           {"--url", statusServer(t, token), "--token", token},
	}
	// Where --json existed, it stays as a deprecated alias of this format.
	legacy := map[string]string{
		"upstream list": cli.JSON, "connector types": cli.JSON, "tools list": cli.JSON, "approvals list": cli.JSON,
		"audit tail": cli.JSONL, "audit query": cli.JSONL, "token list": cli.JSON, "vault list": cli.JSON,
	}
	seen := map[string]bool{}
	walk(newRoot(), func(path string, c *cobra.Command) {
		// (init's -o is the file it writes, not a format.)
		if f := c.Flags().Lookup("output"); f == nil || !strings.HasPrefix(f.Usage, "output format: ") {
			if slices.Contains(listShowNames, c.Name()) {
				t.Errorf("%s: no -o flag", path)
			}
			return
		}
		seen[path] = true
		extra, ok := args[path]
		if !ok {
			t.Errorf("%s takes -o but is not in this test's table", path)
			return
		}
		t.Run(strings.ReplaceAll(path, " ", "_"), func(t *testing.T) {
			run := func(more ...string) (string, string) {
				t.Helper()
				argv := slices.Concat(strings.Fields(path), extra, more, flags)
				out, errOut, err := runCLISplit(t, argv...)
				if err != nil {
					t.Fatalf("%v: %v\n%s%s", argv, err, out, errOut)
				}
				return out, errOut
			}
			if out, _ := run(); strings.TrimSpace(out) == "" {
				t.Errorf("table: nothing printed")
			}
			asJSON, _ := run("-o", "json")
			var fromJSON any
			if err := json.Unmarshal([]byte(asJSON), &fromJSON); err != nil {
				t.Fatalf("-o json does not parse: %v\n%s", err, asJSON)
			}
			asYAML, _ := run("-o", "yaml")
			var fromYAML any
			if err := yaml.Unmarshal([]byte(asYAML), &fromYAML); err != nil {
				t.Fatalf("-o yaml does not parse: %v\n%s", err, asYAML)
			}
			if !reflect.DeepEqual(normalize(t, fromJSON), normalize(t, fromYAML)) {
				t.Errorf("yaml and json disagree:\n%s\n%s", asYAML, asJSON)
			}
			_, _, err := runCLISplit(t, slices.Concat(strings.Fields(path), extra, []string{"-o", "bogus"}, flags)...)
			if err == nil || !strings.Contains(err.Error(), "table, json") || !strings.Contains(err.Error(), "yaml") {
				t.Errorf("-o bogus: %v", err)
			}
			if f, ok := legacy[path]; ok {
				out, _ := run("--json")
				dec := json.NewDecoder(strings.NewReader(out))
				for n := 0; ; n++ {
					var v any
					if err := dec.Decode(&v); err != nil {
						if n == 0 || err.Error() != "EOF" {
							t.Errorf("--json (-o %s) does not parse: %v\n%s", f, err, out)
						}
						break
					}
				}
			}
		})
	})
	for path := range args {
		if !seen[path] {
			t.Errorf("%s: no such command with -o", path)
		}
	}
}

// normalize makes decoded JSON and YAML comparable: numbers as float64.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// An empty list says so in a table, with how to add the first; json and
// yaml print an empty list. Nothing of it is on standard error.
func TestEmptyListsSaySo(t *testing.T) {
	state := t.TempDir()
	for path, want := range map[string]string{
		"upstream list":  "no upstreams configured; add one with `legate upstream add`",
		"connector list": "no connector instances; add one with `legate connector add`",
		"approvals list": "no pending approval requests",
		"audit query":    "no audit rows match",
		"audit tail":     "no audit rows yet",
		"token list":     "no tokens; make one with `legate token create NAME`",
		"user list":      "no users; make one with `legate user add NAME`",
		"vault list":     "no secrets; store one with `legate vault set NAME`",
	} {
		t.Run(strings.ReplaceAll(path, " ", "_"), func(t *testing.T) {
			argv := append(strings.Fields(path), "--state-dir", state)
			out, errOut, err := runCLISplit(t, argv...)
			if err != nil || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 || errOut != "" {
				t.Errorf("table: %v\nstdout: %q\nstderr: %q", err, out, errOut)
			}
			out, _, err = runCLISplit(t, append(argv, "-o", "json")...)
			if err != nil || out != "[]\n" {
				t.Errorf("json: %v %q", err, out)
			}
			out, _, err = runCLISplit(t, append(argv, "-o", "yaml")...)
			if err != nil || out != "[]\n" {
				t.Errorf("yaml: %v %q", err, out)
			}
		})
	}
}

// --json may be given with -o json (the same format), not with another.
func TestOutputJSONAliasWithO(t *testing.T) {
	out, errOut, err := runCLISplit(t, "upstream", "list", "-o", "json", "--json", "--state-dir", t.TempDir())
	if err != nil || out != "[]\n" || !strings.Contains(errOut, "--json is deprecated; use -o json") {
		t.Fatalf("%v %q %q", err, out, errOut)
	}
	_, _, err = runCLISplit(t, "upstream", "list", "-o", "yaml", "--json", "--state-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "--json and -o yaml disagree") {
		t.Fatalf("--json -o yaml: %v", err)
	}
}
