package host_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/host"
)

// needLandlock skips a test of sh_exec's kernel confinement where the
// kernel offers none, saying so.
func needLandlock(t *testing.T) {
	t.Helper()
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 1 {
		t.Skipf("skipped: the kernel offers no Landlock (%v), so sh_exec's confinement cannot be tested here", err)
	}
}

// boxed is a workspace beside a state directory holding a vault key and
// an outside directory, none of them under shell_read_dirs.
type boxed struct {
	ws, state, outside, secret string
}

func newBoxed(t *testing.T) *boxed {
	t.Helper()
	base := t.TempDir()
	b := &boxed{ws: filepath.Join(base, "ws"), state: filepath.Join(base, "state"), outside: filepath.Join(base, "outside"), secret: "VAULT-KEY-" + rand.Text()}
	for _, d := range []string{b.ws, b.state, b.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(b.state, "vault.key"), []byte(b.secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *boxed) gateway(t *testing.T, extra string) *gateway {
	t.Helper()
	return newGateway(t, "workspace_root: "+b.ws+"\nskills_dir: "+filepath.Join(b.state, "skills")+"\nallow_shell: true\n"+extra)
}

// denied checks that a command ran and failed without showing the secret.
func (b *boxed) denied(t *testing.T, r map[string]any) {
	t.Helper()
	if r["exit_code"].(float64) == 0 || strings.Contains(toJSON(r), b.secret) {
		t.Fatalf("not denied: %v", r)
	}
}

// absent checks that nothing was written outside the workspace.
func (b *boxed) absent(t *testing.T) {
	t.Helper()
	if entries, _ := os.ReadDir(b.outside); len(entries) > 0 {
		t.Fatalf("a command wrote outside the workspace: %v", entries)
	}
}

// The regressions of an allow-list of interpreters: each ran arbitrary
// commands, wrote outside the workspace or read a secret. Options that
// run a program or write a file are refused whatever the kernel; what
// the allow-listed programs reach is bounded by Landlock.
func TestShellAllowlistedInterpretersConfined(t *testing.T) {
	needLandlock(t)
	b := newBoxed(t)
	cs := b.gateway(t, "shell_allowlist: [cat, find, git, make, env]").connect(t, nil)
	t.Setenv("SHELL_TEST_HIDDEN", "hidden")

	refused := map[string]string{
		"git -c core.fsmonitor":  "git -c core.fsmonitor=" + filepath.Join(b.ws, "x") + " status",
		"git -c attached":        "git -ccore.fsmonitor=x status",
		"git -c diff.external":   "git -c diff.external=x diff",
		"git --config-env":       "git --config-env=core.pager=X log",
		"git --exec-path":        "git --exec-path=" + b.outside + " status",
		"git -C outside":         "git -C " + b.outside + " status",
		"git --git-dir outside":  "git --git-dir=" + b.state + " log",
		"git clone -u":           "git clone -u x https://example.org/r.git",
		"git --upload-pack":      "git ls-remote --upload-pack=x origin",
		"git rebase -x":          "git rebase -x x HEAD~1",
		"find -fprint":           "find . -fprint " + filepath.Join(b.outside, "x"),
		"find -exec":             "find . -exec cat {} ;",
		"find -delete":           "find . -delete",
		"make -f outside":        "make -f " + filepath.Join(b.outside, "evil.mk"),
		"make -f climbing":       "make -f ../outside/evil.mk",
		"make --file= outside":   "make --file=/etc/evil.mk",
		"make -C outside":        "make -C /",
		"make cluster with f":    "make -sf evil.mk",
		"make --eval":            "make --eval=x",
		"not on the allowlist":   "sh -c id",
		"a path for the program": "/usr/bin/cat x",
	}
	for name, cmd := range refused {
		t.Run(name, func(t *testing.T) {
			fails(t, cs, "sh_exec", map[string]any{"command": cmd}, "PERMISSION_DENIED")
		})
	}

	// Secrets outside the workspace stay out of reach of what is allowed.
	b.denied(t, ok(t, cs, "sh_exec", map[string]any{"command": "cat " + filepath.Join(b.state, "vault.key")}))
	b.denied(t, ok(t, cs, "sh_exec", map[string]any{"command": "cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ"}))
	b.denied(t, ok(t, cs, "sh_exec", map[string]any{"command": "find " + b.state}))

	// The environment is empty but for PATH.
	r := ok(t, cs, "sh_exec", map[string]any{"command": "env"})
	if got := r["stdout"]; got != "PATH="+host.DefaultShellPath+"\n" {
		t.Errorf("env: got %q", got)
	}

	// A Makefile in the workspace is code the agent wrote: it runs, confined.
	mk := "all:\n\techo ran > made.txt\n\techo pwned > " + filepath.Join(b.outside, "made") + "\n"
	if err := os.WriteFile(filepath.Join(b.ws, "evil.mk"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	r = ok(t, cs, "sh_exec", map[string]any{"command": "make -f evil.mk"})
	if _, err := os.Stat(filepath.Join(b.ws, "made.txt")); err != nil || r["exit_code"].(float64) == 0 {
		t.Errorf("make -f evil.mk: the recipe did not run inside and fail outside: %v", r)
	}
	b.absent(t)

	// So is a git hook: core.fsmonitor set in .git/config runs at git status.
	ok(t, cs, "sh_exec", map[string]any{"command": "git init -q"})
	hook := "#!/bin/sh\necho ran > hook.txt\necho pwned > " + filepath.Join(b.outside, "hook") + "\ncat " + filepath.Join(b.state, "vault.key") + " >> hook.txt\n"
	if err := os.WriteFile(filepath.Join(b.ws, "fsmonitor.sh"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(b.ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[core]\n\tfsmonitor = " + filepath.Join(b.ws, "fsmonitor.sh") + "\n")
	f.Close()
	ok(t, cs, "sh_exec", map[string]any{"command": "git status"})
	out, err := os.ReadFile(filepath.Join(b.ws, "hook.txt"))
	if err != nil || strings.Contains(string(out), b.secret) {
		t.Errorf("the hook did not run, or read the secret: %q %v", out, err)
	}
	b.absent(t)
}

// Without an allowlist, sh -c runs anything: only the kernel bounds it.
func TestShellUnrestrictedConfined(t *testing.T) {
	needLandlock(t)
	b := newBoxed(t)
	cs := b.gateway(t, "").connect(t, nil)
	t.Setenv("SHELL_TEST_HIDDEN", "hidden")

	for _, cmd := range []string{
		"cat " + filepath.Join(b.state, "vault.key"),
		"cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ",
		"cat /proc/self/environ",
		"ls " + b.state,
		"echo x > " + filepath.Join(b.outside, "x"),
		"echo x > /tmp/legate-shell-test-" + rand.Text(),
		"mkdir " + filepath.Join(b.outside, "d"),
		"kill -0 " + strconv.Itoa(os.Getpid()),
	} {
		t.Run(cmd, func(t *testing.T) { b.denied(t, ok(t, cs, "sh_exec", map[string]any{"command": cmd})) })
	}
	b.absent(t)
	r := ok(t, cs, "sh_exec", map[string]any{"command": "env"})
	if env := r["stdout"].(string); strings.Contains(env, "SHELL_TEST_HIDDEN") || !strings.Contains(env, "PATH="+host.DefaultShellPath) {
		t.Errorf("env: %q", env)
	}
	// The workspace is writable, the system readable.
	r = ok(t, cs, "sh_exec", map[string]any{"command": "echo hi > in.txt && mkdir -p a/b && mv in.txt a/b/ && cat a/b/in.txt /etc/passwd >/dev/null && cat a/b/in.txt"})
	if r["stdout"] != "hi\n" {
		t.Fatalf("work in the workspace: %v", r)
	}

}

// A command's environment holds only what shell_env names.
func TestShellEnv(t *testing.T) {
	b := newBoxed(t)
	cs := b.gateway(t, "shell_allowlist: [env]\nshell_env: [SHELL_TEST_PASSED, SHELL_TEST_UNSET, LANG=C, HOME=/nonexistent]").connect(t, nil)
	t.Setenv("SHELL_TEST_PASSED", "passed-through")
	t.Setenv("SHELL_TEST_HIDDEN", "hidden")
	r := ok(t, cs, "sh_exec", map[string]any{"command": "env"})
	got := strings.Split(strings.TrimSpace(r["stdout"].(string)), "\n")
	slices.Sort(got)
	if want := []string{"HOME=/nonexistent", "LANG=C", "PATH=" + host.DefaultShellPath, "SHELL_TEST_PASSED=passed-through"}; !slices.Equal(got, want) {
		t.Errorf("env: got %q, want %q", got, want)
	}
}

// The rlimits: a file stops at shell_max_file_bytes, a busy loop at
// shell_max_cpu, well before shell_timeout.
func TestShellLimits(t *testing.T) {
	b := newBoxed(t)
	cs := b.gateway(t, "shell_timeout: 20s\nshell_max_cpu: 1s\nshell_max_file_bytes: 4096").connect(t, nil)
	ok(t, cs, "sh_exec", map[string]any{"command": "head -c 100000 /dev/zero > big"})
	if st, err := os.Stat(filepath.Join(b.ws, "big")); err != nil || st.Size() > 4096 {
		t.Errorf("shell_max_file_bytes not applied: %v", err)
	}
	start := time.Now()
	r := ok(t, cs, "sh_exec", map[string]any{"command": "while :; do :; done"})
	if r["timed_out"] == true || r["exit_code"].(float64) == 0 || time.Since(start) > 15*time.Second {
		t.Errorf("shell_max_cpu not applied: %v after %s", r, time.Since(start))
	}
}

// Where the kernel has no Landlock, an allow-listed command may not name
// a path outside the workspace.
func TestShellFallbackWithoutLandlock(t *testing.T) {
	defer host.WithoutLandlock()()
	b := newBoxed(t)
	cs := b.gateway(t, "shell_allowlist: [cat, ls]").connect(t, nil)
	if err := os.WriteFile(filepath.Join(b.ws, "in.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"cat " + filepath.Join(b.state, "vault.key"),
		"cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ",
		"cat ../state/vault.key",
		"cat in.txt/../../state/vault.key",
		"ls --color=/etc",
	} {
		t.Run(cmd, func(t *testing.T) { fails(t, cs, "sh_exec", map[string]any{"command": cmd}, "PERMISSION_DENIED") })
	}
	for _, cmd := range []string{"cat in.txt", "cat " + filepath.Join(b.ws, "in.txt")} {
		if r := ok(t, cs, "sh_exec", map[string]any{"command": cmd}); r["stdout"] != "inside\n" {
			t.Errorf("%s: %v", cmd, r)
		}
	}
}

func TestShellConfigChecks(t *testing.T) {
	for name, tc := range map[string]struct{ config, want string }{
		"env name":        {"shell_env: [A-B]", "shell_env"},
		"legate setting":  {"shell_env: [LEGATE_VAULT_KEY]", "shell_env"},
		"relative dir":    {"shell_read_dirs: [usr]", "shell_read_dirs"},
		"root":            {"shell_write_dirs: [/]", "shell_write_dirs"},
		"holds the state": {"shell_read_dirs: [/usr, STATE]", "shell_read_dirs"},
		"cpu":             {"shell_max_cpu: 10ms", "shell_max_cpu"},
		"negative":        {"shell_max_file_bytes: -1", "shell_max_file_bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBoxed(t)
			cfg := strings.ReplaceAll(tc.config, "STATE", filepath.Dir(b.state))
			err := validate(t, "workspace_root: "+b.ws+"\nskills_dir: "+filepath.Join(b.state, "skills")+"\nallow_shell: true\n"+cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error naming %s, got %v", tc.want, err)
			}
		})
	}
}

// validate builds a host instance from config and returns the error.
func validate(t *testing.T, config string) error {
	t.Helper()
	ct, _ := connectors.Lookup("host")
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(config), &node); err != nil {
		t.Fatal(err)
	}
	_, err := connectors.Build(ct, "host", node.Content[0], "c")
	return err
}
