package e2e_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"
)

// readmeBlock is one fenced shell block of a document and its marker.
type readmeBlock struct {
	line       int
	script     string
	background bool
	prints     string // text the block's output must hold ("" for none)
	exits      int    // the exit status the block must end with
}

// shellFences open the blocks a reader would paste into a shell: each needs a marker.
var shellFences = []string{"```sh", "```bash", "```shell", "```console"}

// docFiles are the documents whose shell blocks the README test checks and runs, relative to
// the module root: README.md, then docs/*.md in name order.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.ToSlash(filepath.Join("docs", filepath.Base(d))))
	}
	slices.Sort(files[1:])
	return files
}

// readmeBlocks returns the runnable shell blocks of the document rel (relative to the module
// root), and fails t on a shell block that is neither marked runnable nor says why it is not.
// The marker is the line before the fence:
//
//	<!-- runnable -->                       run it; it must exit 0
//	<!-- runnable: background -->           start it (legate serve) and wait for 127.0.0.1:8080
//	<!-- runnable: prints TEXT -->          run it; it must exit 0 and print TEXT
//	<!-- runnable: exits N, prints TEXT --> run it; it must exit N and print TEXT
//	<!-- not runnable by the README test: WHY -->
func readmeBlocks(t *testing.T, rel string) []readmeBlock {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		if !slices.Contains(shellFences, strings.TrimSpace(lines[i])) {
			continue
		}
		marker := ""
		if i > 0 {
			marker = strings.TrimSpace(lines[i-1])
		}
		start := i + 1
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		b := readmeBlock{line: start, script: strings.Join(body, "\n") + "\n"}
		switch opts, ok := strings.CutPrefix(marker, "<!-- runnable"); {
		case strings.HasPrefix(marker, "<!-- not runnable by the README test: "):
			continue
		case !ok || !strings.HasSuffix(opts, "-->"):
			t.Errorf("%s:%d: a shell block marked neither <!-- runnable --> nor <!-- not runnable by the README test: WHY -->", rel, start)
			continue
		default:
			if err := b.parseMarker(strings.TrimSpace(strings.TrimSuffix(opts, "-->"))); err != nil {
				t.Errorf("%s:%d: %s: %v", rel, start, marker, err)
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// parseMarker reads the options of a runnable marker: "" (none), or after a colon "background",
// or "prints TEXT" and "exits N", separated by ", ".
func (b *readmeBlock) parseMarker(opts string) error {
	if opts == "" {
		return nil
	}
	opts, ok := strings.CutPrefix(opts, ":")
	if !ok {
		return fmt.Errorf("want <!-- runnable --> or <!-- runnable: OPTIONS -->")
	}
	for _, o := range strings.Split(strings.TrimSpace(opts), ", ") {
		switch {
		case o == "background":
			b.background = true
		case strings.HasPrefix(o, "prints "):
			b.prints = strings.TrimPrefix(o, "prints ")
		case strings.HasPrefix(o, "exits "):
			if _, err := fmt.Sscanf(strings.TrimPrefix(o, "exits "), "%d", &b.exits); err != nil {
				return fmt.Errorf("exits %q: %v", o, err)
			}
		default:
			return fmt.Errorf("unknown option %q (background, prints TEXT, exits N)", o)
		}
	}
	return nil
}

// TestReadmeShellBlocksAreMarked: every shell block of README.md and docs/*.md says whether the
// README test runs it. Needs no peers.
func TestReadmeShellBlocksAreMarked(t *testing.T) {
	for _, rel := range docFiles(t) {
		readmeBlocks(t, rel)
	}
}

// TestReadmeQuickstartOrder: the README's runnable blocks are the quickstart, in the order a
// newcomer goes: init, serve, the inspector lists the tools, an upstream is added, a write is
// held, approved from the CLI, and called again. Needs no peers; TestReadmeRuns runs them.
func TestReadmeQuickstartOrder(t *testing.T) {
	steps := []string{"legate init", "legate serve", "--method tools/list", "legate upstream add everything",
		"--method tools/call", "legate approvals approve", "--method tools/call"}
	var script strings.Builder
	for _, b := range readmeBlocks(t, "README.md") {
		script.WriteString(b.script)
	}
	rest := script.String()
	for _, s := range steps {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("README.md's runnable blocks lack, after the steps before it, %q", s)
		}
		rest = rest[i+len(s):]
	}
}

// TestErrorsDocListsEveryCode: docs/errors.md's table has a row, saying what the caller should
// do, for every error code errors.go declares (each constant of type Code), and no other. Needs
// no peers.
func TestErrorsDocListsEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "errors.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok {
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Code" {
				for _, val := range v.Values {
					if lit, ok := val.(*ast.BasicLit); ok {
						codes = append(codes, strings.Trim(lit.Value, `"`))
					}
				}
			}
		}
		return true
	})
	if len(codes) < 10 {
		t.Fatalf("errors.go: found only %d codes: %v", len(codes), codes)
	}
	raw, err := os.ReadFile(filepath.Join("..", "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for line := range strings.Lines(string(raw)) {
		code, rest, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "` | ")
		if ok && strings.HasPrefix(line, "| `") && strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "|")) != "" {
			rows[code] = true
		}
	}
	for _, c := range codes {
		if !rows[c] {
			t.Errorf("docs/errors.md has no row for %s", c)
		}
		delete(rows, c)
	}
	for c := range rows {
		t.Errorf("docs/errors.md has a row for %s, which errors.go does not declare", c)
	}
}

// TestReadmeRuns runs the runnable shell blocks of README.md, and of each docs/*.md that has
// some, as written and in order, each document on a fresh state: an empty HOME and XDG
// directories, no LEGATE_* variable, a new temporary folder as the working directory, and the
// legate binary the e2e tests built on PATH (as `legate`). A background block (legate serve) is
// started and waited for on 127.0.0.1:8080, and ended when its document is done; each other block
// must exit 0 and print what its marker says.
//
// npx runs from the pinned peers ($LEGATE_PEERS_DIR) where they hold the package: a wrapper named
// npx first on PATH (legate serve hands PATH to the stdio upstreams it starts) runs the real npx
// from the peers' run/ folder, so the versions of the peers the documents name (server-everything)
// are found installed, with no download. A package the peers lack (the current MCP Inspector, which
// the peers do not pin) comes from the npm registry once, into the user's npm cache, which the
// wrapper names since HOME is empty here; later runs take it from there (--prefer-offline).
func TestReadmeRuns(t *testing.T) {
	p := need(t)
	bin := binary(t)
	realNPX, err := exec.LookPath("npx")
	if err != nil {
		t.Fatalf("npx: %v", err)
	}
	npmCache := os.Getenv("npm_config_cache")
	if npmCache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		npmCache = filepath.Join(home, ".npm")
	}
	ran := 0
	for _, rel := range docFiles(t) {
		blocks := readmeBlocks(t, rel)
		if len(blocks) == 0 {
			if rel == "README.md" {
				t.Fatal("README.md has no runnable block")
			}
			continue
		}
		ran++
		t.Run(rel, func(t *testing.T) {
			runDocBlocks(t, p, bin, realNPX, npmCache, rel, blocks)
		})
	}
	t.Logf("ran the blocks of %d documents", ran)
}

func runDocBlocks(t *testing.T, p *peerSet, bin, realNPX, npmCache, rel string, blocks []readmeBlock) {
	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		t.Fatalf("the documents' commands use 127.0.0.1:8080, which is taken here: %v", err)
	}
	ln.Close()
	fresh := t.TempDir()
	binDir, work, home := filepath.Join(fresh, "bin"), filepath.Join(fresh, "work"), filepath.Join(fresh, "home")
	for _, d := range []string{binDir, work, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bin, filepath.Join(binDir, "legate")); err != nil {
		t.Fatal(err)
	}
	shim := fmt.Sprintf("#!/bin/sh\n# npx from the pinned peers (TestReadmeRuns)\ncd '%s' && exec '%s' --cache '%s' --prefer-offline \"$@\"\n",
		filepath.Join(p.dir, "run"), realNPX, npmCache)
	if err := os.WriteFile(filepath.Join(binDir, "npx"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"HOME="+home,
		"XDG_STATE_HOME="+filepath.Join(fresh, "state"), "XDG_CONFIG_HOME="+filepath.Join(fresh, "config"),
		"XDG_CACHE_HOME="+filepath.Join(fresh, "cache"), "XDG_DATA_HOME="+filepath.Join(fresh, "data"),
		"LEGATE_STATE_DIR=", "LEGATE_STORE=", "LEGATE_STORE_URL=", "LEGATE_ADMIN_TOKEN=", "LEGATE_TOKEN=",
		"LEGATE_MASTER_KEY=", "LEGATE_KEY_FILE=", "LEGATE_PANEL_ADDR=",
		"PATH="+binDir+string(os.PathListSeparator)+filepath.Dir(p.node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
	)
	for _, b := range blocks {
		name := fmt.Sprintf("%s:%d", rel, b.line)
		var out syncbuf.Buffer
		if b.background {
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", b.script)
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = work, env, &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			t.Cleanup(func() {
				// The server and the upstreams it started: end the whole group.
				syscallKillGroup(cmd)
				<-exited
				if t.Failed() {
					t.Logf("%s output:\n%s", name, out.String())
				}
			})
			waitHealthy(t, name, "http://127.0.0.1:8080/healthz", exited, &out)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // npx may fetch a package once
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.script)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = work, env, &out, &out
		err := cmd.Run()
		cancel()
		status := 0
		if exit, ok := err.(*exec.ExitError); ok {
			status, err = exit.ExitCode(), nil
		}
		if err != nil || status != b.exits {
			t.Fatalf("%s fails as written: exit status %d (want %d), %v\n%s\n%s", name, status, b.exits, err, b.script, out.String())
		}
		if b.prints != "" && !strings.Contains(out.String(), b.prints) {
			t.Fatalf("%s does not print %q:\n%s\n%s", name, b.prints, b.script, out.String())
		}
		t.Logf("%s ran:\n%s", name, out.String())
	}
}

// waitHealthy waits up to 3 minutes for url to answer 200.
func waitHealthy(t *testing.T, name, url string, exited <-chan struct{}, out *syncbuf.Buffer) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case <-exited:
			t.Fatalf("%s exited before it served:\n%s", name, out.String())
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not healthy within 3 minutes:\n%s", name, url, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
