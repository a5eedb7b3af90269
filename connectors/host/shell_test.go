package host_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The shell and the other opt-in tools are not listed while off.
func TestOptInToolsUnlisted(t *testing.T) {
	_, g := workspace(t, "")
	names := toolNames(t, g.connect(t, nil))
	for _, off := range []string{"host.sh_exec", "host.sh_which", "host.pkg_install", "host.net_fetch", "host.skills_list"} {
		if slices.Contains(names, off) {
			t.Errorf("%s is listed while off", off)
		}
	}
	if !slices.Contains(names, "host.fs_read") || !slices.Contains(names, "host.host_env") {
		t.Errorf("always-on tools missing: %v", names)
	}
	_, g = workspace(t, "allow_shell: true\nallow_install: true\nallow_fetch: true")
	res, err := g.connect(t, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each tool's class reaches clients as its annotations.
	want := map[string]string{
		"host.fs_read": "read", "host.fs_list": "read", "host.fs_glob": "read", "host.fs_grep": "read",
		"host.fs_write": "write", "host.fs_edit": "write", "host.fs_delete": "destructive",
		"host.host_info": "read", "host.host_env": "read", "host.host_disk": "read", "host.host_net": "read",
		"host.sh_exec": "destructive", "host.sh_which": "read", "host.pkg_install": "write", "host.net_fetch": "write",
	}
	for _, tool := range res.Tools {
		class, listed := want[tool.Name]
		if !listed {
			continue
		}
		delete(want, tool.Name)
		a := tool.Annotations
		got := "write"
		switch {
		case a != nil && a.ReadOnlyHint:
			got = "read"
		case a != nil && a.DestructiveHint != nil && *a.DestructiveHint:
			got = "destructive"
		}
		if got != class || tool.OutputSchema == nil {
			t.Errorf("%s: class %s, want %s; output schema %v", tool.Name, got, class, tool.OutputSchema != nil)
		}
	}
	if len(want) > 0 {
		t.Errorf("not listed with every switch on: %v", want)
	}
}

func TestShellAllowlist(t *testing.T) {
	ws, g := workspace(t, "allow_shell: true\nshell_allowlist: [echo, ls, rm]\nshell_denylist: [rm]")
	cs := g.connect(t, nil)
	canary := filepath.Join(ws, "canary")
	if err := os.WriteFile(canary, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ok(t, cs, "sh_exec", map[string]any{"command": "echo hello  world"})
	if r["stdout"] != "hello world\n" || r["exit_code"].(float64) != 0 || r["shell"] != false {
		t.Fatalf("echo: %v", r)
	}
	for name, cmd := range map[string]string{
		"semicolon":     "echo a; rm canary",
		"and":           "echo a && rm canary",
		"or":            "echo a || rm canary",
		"pipe":          "echo a | sh",
		"background":    "echo a & rm canary",
		"redirect out":  "echo a > canary",
		"redirect in":   "echo < canary",
		"subshell":      "echo $(rm canary)",
		"backticks":     "echo `rm canary`",
		"variable":      "echo $HOME",
		"braces":        "echo ${HOME}",
		"parentheses":   "(rm canary)",
		"double quotes": `echo "a b"`,
		"single quotes": "echo 'a b'",
		"glob star":     "ls *",
		"glob question": "ls ?anary",
		"glob class":    "ls [c]anary",
		"tilde":         "ls ~",
		"comment":       "echo a #",
		"history":       "echo !!",
		"backslash":     `echo a\;rm canary`,
		"newline":       "echo a\nrm canary",
		"carriage ret":  "echo a\rrm canary",
		"sh -c":         "sh -c 'rm canary'",
	} {
		t.Run(name, func(t *testing.T) {
			fails(t, cs, "sh_exec", map[string]any{"command": cmd}, "PERMISSION_DENIED")
		})
	}
	fails(t, cs, "sh_exec", map[string]any{"command": "sh -c id"}, "PERMISSION_DENIED")    // not on the list
	fails(t, cs, "sh_exec", map[string]any{"command": "/bin/echo a"}, "PERMISSION_DENIED") // a path
	fails(t, cs, "sh_exec", map[string]any{"command": "rm canary"}, "PERMISSION_DENIED")   // denylist wins
	fails(t, cs, "sh_exec", map[string]any{"command": "VAR=1 echo"}, "PERMISSION_DENIED")  // no assignments
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("the canary is gone: %v", err)
	}
	w := ok(t, cs, "sh_which", map[string]any{"name": "echo"})
	if w["found"] != true {
		t.Errorf("sh_which echo: %v", w)
	}
	if w := ok(t, cs, "sh_which", map[string]any{"name": "no-such-program-xyz"}); w["found"] != false {
		t.Errorf("sh_which of a missing program: %v", w)
	}
}

func TestShellUnrestricted(t *testing.T) {
	ws, g := workspace(t, "allow_shell: true\nshell_denylist: [shutdown]\nshell_timeout: 1s\nmax_tool_output_bytes: 4096")
	cs := g.connect(t, nil)
	r := ok(t, cs, "sh_exec", map[string]any{"command": "echo a && echo b >&2; exit 3"})
	if r["stdout"] != "a\n" || r["stderr"] != "b\n" || r["exit_code"].(float64) != 3 || r["shell"] != true {
		t.Fatalf("sh -c: %v", r)
	}
	fails(t, cs, "sh_exec", map[string]any{"command": "echo a; /sbin/shutdown -h now"}, "PERMISSION_DENIED")

	// The working directory is resolved in the workspace like any path.
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(ws, "sub", "up")); err != nil {
		t.Fatal(err)
	}
	if r := ok(t, cs, "sh_exec", map[string]any{"command": "pwd", "dir": "sub"}); r["stdout"] != filepath.Join(ws, "sub")+"\n" {
		t.Errorf("pwd in sub: %v", r["stdout"])
	}
	for _, dir := range []string{"..", "/", "sub/up/..", filepath.Dir(ws)} {
		fails(t, cs, "sh_exec", map[string]any{"command": "pwd", "dir": dir}, "PERMISSION_DENIED")
	}

	// Output is capped and says so.
	r = ok(t, cs, "sh_exec", map[string]any{"command": "yes | head -c 200000"})
	if r["truncated"] != true || len(r["stdout"].(string)) > 4096 {
		t.Errorf("output not capped: truncated=%v, %d bytes", r["truncated"], len(r["stdout"].(string)))
	}

	// The timeout kills the whole process group: the sleeping child is gone.
	r = ok(t, cs, "sh_exec", map[string]any{"command": "sleep 300 & echo $! > child.pid; wait"})
	if r["timed_out"] != true || r["exit_code"].(float64) != -1 {
		t.Fatalf("not timed out: %v", r)
	}
	b, err := os.ReadFile(filepath.Join(ws, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Fatalf("the child %d survived the timeout", pid)
	}
}

// alive reports whether pid runs (a zombie, killed and waiting to be
// reaped by whoever inherited it, does not). A SIGKILL sent to the group
// before the call returned is delivered, but the kernel may take a moment
// to mark the process dead; it is looked at until it is, at most a minute.
func alive(pid int) bool {
	for range 600 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return false
		}
		sleepBriefly()
	}
	return true
}
