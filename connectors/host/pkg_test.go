package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/host"
)

// fakeBin puts a fake apt-get and sudo on PATH, alone: each records its
// argv, one word a line, in log; sudo then runs the rest of its argv.
func fakeBin(t *testing.T) (log string) {
	t.Helper()
	bin := t.TempDir()
	log = filepath.Join(t.TempDir(), "argv.log")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("apt-get", `echo "apt-get" >> `+log+`; for a in "$@"; do printf "%s\\n" "$a" >> `+log+`; done; echo installed`+"\n")
	write("sudo", `echo "sudo" >> `+log+`; for a in "$@"; do printf "%s\\n" "$a" >> `+log+`; done
[ "$1" = "-n" ] || { echo "sudo: a password is required" >&2; exit 1; }
shift; [ "$1" = "--" ] && shift
exec "$@"
`)
	t.Setenv("PATH", bin)
	return log
}

func TestPkgInstall(t *testing.T) {
	log := fakeBin(t)
	_, g := workspace(t, "allow_install: true\ninstall_allowlist: [jq, git, curl]")
	cs := g.connect(t, nil)

	t.Run("as root, no sudo", func(t *testing.T) {
		defer host.SetEUID(0)()
		os.Remove(log)
		r := ok(t, cs, "pkg_install", map[string]any{"packages": []string{"jq", "git"}})
		if r["exit_code"].(float64) != 0 || r["manager"] != "apt-get" {
			t.Fatalf("pkg_install: %v", r)
		}
		want := "apt-get\ninstall\n-y\n--no-install-recommends\njq\ngit\n"
		if b, _ := os.ReadFile(log); string(b) != want {
			t.Fatalf("argv:\n%s\nwant:\n%s", b, want)
		}
	})
	t.Run("not root, sudo -n", func(t *testing.T) {
		defer host.SetEUID(1000)()
		os.Remove(log)
		ok(t, cs, "pkg_install", map[string]any{"packages": []string{"curl"}})
		want := "sudo\n-n\n--\napt-get\ninstall\n-y\n--no-install-recommends\ncurl\n" +
			"apt-get\ninstall\n-y\n--no-install-recommends\ncurl\n"
		if b, _ := os.ReadFile(log); string(b) != want {
			t.Fatalf("argv:\n%s\nwant:\n%s", b, want)
		}
	})
	t.Run("refused", func(t *testing.T) {
		os.Remove(log)
		for _, names := range [][]string{
			{"-o"}, {"--allow-unauthenticated", "jq"}, {"jq", "-y"}, {"jq;rm"}, {"jq git"},
			{"../jq"}, {"$(id)"}, {""}, {},
		} {
			fails(t, cs, "pkg_install", map[string]any{"packages": names}, "INVALID_ARGUMENT")
		}
		fails(t, cs, "pkg_install", map[string]any{"packages": []string{"nmap"}}, "PERMISSION_DENIED")
		if _, err := os.Stat(log); !os.IsNotExist(err) {
			b, _ := os.ReadFile(log)
			t.Fatalf("a refused install ran: %s", b)
		}
	})
	t.Run("no package manager", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		fails(t, cs, "pkg_install", map[string]any{"packages": []string{"jq"}}, "NOT_FOUND")
	})
	if out := ok(t, cs, "host_info", map[string]any{}); !strings.Contains(toJSON(out), `"install":true`) {
		t.Errorf("host_info does not report the install switch: %v", out)
	}
}
