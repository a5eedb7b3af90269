package skillscmd_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/skillscmd"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := skillscmd.New(func(*cobra.Command) (string, error) {
		return "", errors.New("the tests name the library with --dir")
	})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestSkillsCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	for name, body := range map[string]string{
		"good/SKILL.md": "---\nname: deploy-api\ndescription: Use to roll out a new API build on this host and check it answers.\n---\nsteps\n",
		"bad/SKILL.md":  "---\nname: db-backup\ndescription: DB backup skill\n---\nsteps\n",
	} {
		p := filepath.Join(repo, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "s"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	dir := t.TempDir()
	out, err := run(t, "install", repo, "--dir", dir)
	if err != nil || strings.Count(out, "(disabled") != 2 {
		t.Fatalf("install: %v\n%s", err, out)
	}
	out, _ = run(t, "list", "--dir", dir)
	if !strings.Contains(out, "warning: db-backup: the description only names the skill") || strings.Contains(out, "warning: deploy-api") {
		t.Fatalf("list:\n%s", out)
	}
	if !strings.Contains(out, "deploy-api  false") {
		t.Fatalf("list does not show deploy-api disabled:\n%s", out)
	}
	if _, err := run(t, "enable", "deploy-api", "--dir", dir); err != nil {
		t.Fatal(err)
	}
	if out, _ = run(t, "list", "--dir", dir); !strings.Contains(out, "deploy-api  true") {
		t.Fatalf("not enabled:\n%s", out)
	}
	if _, err := run(t, "disable", "deploy-api", "--dir", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "rm", "db-backup", "--dir", dir); err != nil {
		t.Fatal(err)
	}
	if out, _ = run(t, "list", "--dir", dir); strings.Contains(out, "db-backup") || !strings.Contains(out, "deploy-api  false") {
		t.Fatalf("after disable and rm:\n%s", out)
	}
	if _, err := run(t, "enable", "no-such", "--dir", dir); err == nil {
		t.Fatal("enabling a missing skill succeeded")
	}
}
