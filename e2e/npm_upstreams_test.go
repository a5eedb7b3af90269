package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNPMUpstreams: real MCP servers from npm behind one Legate — server-everything over stdio
// and over Streamable HTTP (once per client session, once shared, where calls are relayed as
// bytes), server-filesystem and server-memory over stdio. Through Legate the TypeScript SDK
// client sees their tools as mcp__<id>__<tool>, calls them, and receives the progress of a
// long-running operation; "legate tools list" classes them from their
// annotations; and a client that declares roots does not widen server-filesystem's access.
func TestNPMUpstreams(t *testing.T) {
	p := need(t)
	t.Parallel()

	work := t.TempDir()
	allowed := filepath.Join(work, "allowed") // server-filesystem's only directory
	if err := os.Mkdir(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(allowed); err == nil {
		allowed = real // server-filesystem reports the resolved path
	}
	note := "note-" + nonce()
	if err := os.WriteFile(filepath.Join(allowed, "note.txt"), []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	memoryFile := filepath.Join(work, "memory.jsonl")
	everythingHTTP := p.everythingHTTP(t)

	// The children get only env, PATH and HOME: commands are absolute paths.
	config := upstreamConfig(t, fmt.Sprintf(`upstreams:
  - id: everything
    command: %s
  - id: everything-http
    url: http://127.0.0.1:%d/mcp
    session: per_client
  - id: everything-relay
    url: http://127.0.0.1:%d/mcp
  - id: fs
    command: %s
  - id: fs-pc
    command: %s
    session: per_client
  - id: memory
    command: %s
    env: {MEMORY_FILE_PATH: %q}
`,
		yamlList(p.node, p.everything, "stdio"),
		everythingHTTP.port, everythingHTTP.port,
		yamlList(p.node, p.filesystem, allowed),
		yamlList(p.node, p.filesystem, allowed),
		yamlList(p.node, p.memory),
		memoryFile))
	state := t.TempDir()
	ids := []string{"everything", "everything-http", "everything-relay", "fs", "fs-pc", "memory"}
	refreshUpstreams(t, config, state, ids...)

	t.Run("classes", func(t *testing.T) {
		t.Parallel()
		checkClasses(t, catalog(t, config, state))
	})

	s := serveState(t, config, state)
	url := s.url("127.0.0.1")

	t.Run("tools/list", func(t *testing.T) {
		t.Parallel()
		r, out := p.tsClient(t, nil, "--http", url)
		checkUpstreamTools(t, r.Tools, out, slices.Sorted(maps.Keys(upstreamOf))...)
	})

	t.Run("legate stdio", func(t *testing.T) {
		t.Parallel()
		// One upstream only: "legate stdio" starts by refreshing every upstream at once, which
		// on a busy machine can delay the call's own connect past Legate's connect timeout.
		config := upstreamConfig(t, fmt.Sprintf("upstreams:\n  - id: everything\n    command: %s\n", yamlList(p.node, p.everything, "stdio")))
		state := t.TempDir()
		refreshUpstreams(t, config, state, "everything")
		msg := "stdio-" + nonce()
		r, out := p.tsClient(t, nil, "--call", "mcp__everything__echo", jsonArgs(t, map[string]any{"message": msg}),
			"--", legateBin, "stdio", "--config", config, "--state-dir", state)
		checkUpstreamTools(t, r.Tools, out, "everything")
		if text := callText(t, r, 0, "mcp__everything__echo", out); !strings.Contains(text, "Echo: "+msg) {
			t.Errorf("mcp__everything__echo via legate stdio: text %q, want %q in it\n%s", text, "Echo: "+msg, out)
		}
	})

	for _, id := range []string{"everything", "everything-http", "everything-relay"} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			msg := "hello-" + nonce()
			echo, long := "mcp__"+id+"__echo", "mcp__"+id+"__trigger-long-running-operation"
			r, out := p.tsClient(t, nil, "--http", url, "--progress",
				"--call", echo, jsonArgs(t, map[string]any{"message": msg}),
				"--call", long, jsonArgs(t, map[string]any{"duration": 2, "steps": 4}))
			if text := callText(t, r, 0, echo, out); !strings.Contains(text, "Echo: "+msg) {
				t.Errorf("%s: text %q, want %q in it\n%s", echo, text, "Echo: "+msg, out)
			}
			if text := callText(t, r, 1, long, out); !strings.Contains(text, "Long running operation completed") {
				t.Errorf("%s: text %q, want %q in it\n%s", long, text, "Long running operation completed", out)
			}
			if len(r.Calls) == 2 {
				progress := r.Calls[1].Progress
				if len(progress) == 0 {
					t.Errorf("%s {duration: 2, steps: 4} with a progress token: the client received no progress notification (the upstream sends 4)\n%s", long, out)
				} else if len(progress) < 4 {
					// Each notification the upstream sends before its result reaches the
					// client before the result.
					t.Errorf("%s {duration: 2, steps: 4}: the client received %d of the upstream's 4 progress notifications\n%s", long, len(progress), out)
				}
				for i, n := range progress {
					if n.Total != 4 || n.Progress < 1 || n.Progress > 4 || (i > 0 && n.Progress <= progress[i-1].Progress) {
						t.Errorf("%s: progress notifications %+v: want increasing progress in 1..4 of total 4", long, progress)
						break
					}
				}
				t.Logf("%s: %d progress notifications: %+v", long, len(progress), progress)
			}
			if id == "everything-relay" {
				// Both calls were relayed as bytes (the only tools/call of that kind in this test).
				if n := fastCalls(t, s); n != 2 {
					t.Errorf("%v calls to %s took the fast path, want 2", n, id)
				}
			}
		})
	}

	t.Run("filesystem", func(t *testing.T) {
		t.Parallel()
		written := filepath.Join(allowed, "written.txt")
		content := "written-" + nonce()
		r, out := p.tsClient(t, nil, "--http", url,
			"--call", "mcp__fs__read_text_file", jsonArgs(t, map[string]any{"path": filepath.Join(allowed, "note.txt")}),
			"--call", "mcp__fs__write_file", jsonArgs(t, map[string]any{"path": written, "content": content}))
		if text := callText(t, r, 0, "mcp__fs__read_text_file", out); !strings.Contains(text, note) {
			t.Errorf("mcp__fs__read_text_file note.txt: text %q, want the file's content %q\n%s", text, note, out)
		}
		callText(t, r, 1, "mcp__fs__write_file", out)
		if b, err := os.ReadFile(written); err != nil || string(b) != content {
			t.Errorf("after mcp__fs__write_file: %s holds %q (%v), want %q\n%s", written, b, err, content, out)
		}
	})

	t.Run("filesystem roots", func(t *testing.T) {
		t.Parallel()
		// Control: the same client, directly, does widen server-filesystem's access to file:///
		// (the server replaces its directories with the client's roots), so it does declare roots.
		t.Run("control", func(t *testing.T) {
			t.Parallel()
			// --settle: the server applies the roots it asks for after initialize asynchronously.
			r, out := p.tsClient(t, nil, "--root", "file:///", "--settle", "500",
				"--call", "list_allowed_directories", "{}", "--call", "list_allowed_directories", "{}",
				"--", p.node, p.filesystem, allowed)
			if got, ok := allowedDirs(t, r, 1, "list_allowed_directories", out); ok && (r.RootsRequests == 0 || !slices.Equal(got, []string{"/"})) {
				t.Errorf("control, server-filesystem directly: a client declaring the root file:/// got roots/list %d times and allowed directories %q; want ≥1 and [/]: the client does not declare roots as this test needs\n%s",
					r.RootsRequests, got, out)
			}
		})
		for _, id := range []string{"fs", "fs-pc"} {
			t.Run(id, func(t *testing.T) {
				t.Parallel()
				tool := "mcp__" + id + "__list_allowed_directories"
				r, out := p.tsClient(t, nil, "--http", url, "--root", "file:///", "--settle", "500",
					"--call", tool, "{}", "--call", tool, "{}")
				for i := range 2 {
					if got, ok := allowedDirs(t, r, i, tool, out); ok && !slices.Equal(got, []string{allowed}) {
						t.Errorf("%s (call %d) by a client declaring the root file:///: allowed directories %q, want only the configured %q: the client's roots reached the upstream\n%s",
							tool, i+1, got, allowed, out)
					}
				}
				t.Logf("%s: the client answered roots/list %d times", tool, r.RootsRequests)
			})
		}
	})

	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		entity := "entity-" + nonce()
		observation := "observed-" + nonce()
		r, out := p.tsClient(t, nil, "--http", url,
			"--call", "mcp__memory__create_entities", jsonArgs(t, map[string]any{"entities": []any{
				map[string]any{"name": entity, "entityType": "test", "observations": []string{observation}},
			}}),
			"--call", "mcp__memory__read_graph", "{}")
		callText(t, r, 0, "mcp__memory__create_entities", out)
		if text := callText(t, r, 1, "mcp__memory__read_graph", out); !strings.Contains(text, entity) || !strings.Contains(text, observation) {
			t.Errorf("mcp__memory__read_graph after create_entities: text %q, want entity %q with observation %q\n%s", text, entity, observation, out)
		}
		// The upstream got MEMORY_FILE_PATH from the config's env.
		if b, err := os.ReadFile(memoryFile); err != nil || !strings.Contains(string(b), entity) {
			t.Errorf("MEMORY_FILE_PATH %s: %v, content %q: want entity %q in it (is env passed to the upstream?)", memoryFile, err, b, entity)
		}
	})
}

// fastCalls reads how many tools/call requests s answered on its fast path.
func fastCalls(t *testing.T, s *server) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	const series = `legate_fast_path_requests_total{method="tools/call"} `
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}

// upstreamClasses are the classes Legate must give some of the npm upstreams' tools, from
// their annotations: readOnlyHint → read, destructiveHint → destructive, otherwise write.
var upstreamClasses = map[string]map[string]string{
	"everything": {
		"echo": "read", "get-sum": "read", "get-env": "read", "trigger-long-running-operation": "read",
		"toggle-simulated-logging": "write", "gzip-file-as-resource": "write",
	},
	"fs": {
		"read_text_file": "read", "list_directory": "read", "list_allowed_directories": "read",
		"create_directory": "write",
		"write_file":       "destructive", "edit_file": "destructive", "move_file": "destructive",
	},
	"memory": {
		"read_graph": "read", "search_nodes": "read", "open_nodes": "read",
		"create_entities": "write", "create_relations": "write", "add_observations": "write",
		"delete_entities": "destructive", "delete_observations": "destructive", "delete_relations": "destructive",
	},
}

// upstreamOf maps each configured upstream id to the server it runs (a key of upstreamClasses).
var upstreamOf = map[string]string{
	"everything": "everything", "everything-http": "everything", "everything-relay": "everything", "fs": "fs", "fs-pc": "fs", "memory": "memory",
}

func checkClasses(t *testing.T, tools map[string]catalogTool) {
	t.Helper()
	for _, id := range slices.Sorted(maps.Keys(upstreamOf)) {
		for tool, class := range upstreamClasses[upstreamOf[id]] {
			wire, canonical := "mcp__"+id+"__"+tool, "mcp."+id+"."+tool
			got, ok := tools[wire]
			switch {
			case !ok:
				t.Errorf("legate tools list: no %s (canonical %s)", wire, canonical)
			case got.Class != class:
				t.Errorf("legate tools list: %s has class %q, want %q", wire, got.Class, class)
			case got.Canonical != canonical:
				t.Errorf("legate tools list: %s has canonical name %q, want %q", wire, got.Canonical, canonical)
			}
		}
	}
	if t.Failed() {
		var rows []string
		for _, name := range slices.Sorted(maps.Keys(tools)) {
			rows = append(rows, fmt.Sprintf("  %s %s %s", name, tools[name].Canonical, tools[name].Class))
		}
		t.Logf("legate tools list --json:\n%s", strings.Join(rows, "\n"))
	}
}

// checkUpstreamTools checks that tools/list shows the tools of upstreams ids under their
// prefix, and none of them bare.
func checkUpstreamTools(t *testing.T, tools []string, out string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		var want []string
		for tool := range upstreamClasses[upstreamOf[id]] {
			want = append(want, "mcp__"+id+"__"+tool)
		}
		slices.Sort(want)
		var missing []string
		for _, w := range want {
			if !slices.Contains(tools, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			t.Errorf("tools/list lacks %v of upstream %s\n%s", missing, id, out)
		}
	}
	for _, bare := range []string{"echo", "read_text_file", "read_graph"} {
		if slices.Contains(tools, bare) {
			t.Errorf("tools/list shows an upstream tool without its prefix: %s", bare)
		}
	}
}

// callText checks that call i of r is tool, answered without error, and returns its text.
func callText(t *testing.T, r *tsResult, i int, tool, out string) string {
	t.Helper()
	if i >= len(r.Calls) || r.Calls[i].Name != tool {
		t.Errorf("TypeScript SDK client: call %d is not %s\n%s", i+1, tool, out)
		return ""
	}
	c := r.Calls[i]
	if c.Error != nil {
		t.Errorf("%s: JSON-RPC error %d %s\n%s", tool, c.Error.Code, c.Error.Message, out)
		return ""
	}
	res := decodeResult(t, tool, c.Result)
	if res == nil {
		return ""
	}
	var texts []string
	for _, c := range res.Content {
		texts = append(texts, c.Text)
	}
	text := strings.Join(texts, "\n")
	if res.IsError {
		t.Errorf("%s: isError result: %s", tool, text)
	}
	return text
}

// allowedDirs returns the directories that server-filesystem's list_allowed_directories
// reported in call i of r ("Allowed directories:\n/a\n/b"); false (t failed) if the call failed.
func allowedDirs(t *testing.T, r *tsResult, i int, tool, out string) ([]string, bool) {
	t.Helper()
	failed := t.Failed()
	text := callText(t, r, i, tool, out)
	if t.Failed() && !failed {
		return nil, false
	}
	header, rest, ok := strings.Cut(text, "\n")
	if !ok || header != "Allowed directories:" {
		t.Errorf("%s: text %q does not start with %q", tool, text, "Allowed directories:\n")
		return nil, false
	}
	return strings.Split(rest, "\n"), true
}

func jsonArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
