package skills_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/host/skills"
)

// gitRepo makes a git repository holding skills/log-triage, committed.
func gitRepo(t *testing.T) (dir, commit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	p := filepath.Join(dir, "skills", "log-triage", "SKILL.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	body := "---\nname: log-triage\ndescription: Use when a service misbehaves and its logs must be read.\nversion: \"1.2\"\n---\nsteps\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "skills")
	return dir, git("rev-parse", "HEAD")
}

func TestSkillInstallFromGitArrivesDisabled(t *testing.T) {
	repo, commit := gitRepo(t)
	lib := skills.Open(t.TempDir())
	for _, src := range []string{repo, "file://" + repo} {
		got, err := lib.Install(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Name != "log-triage" || got[0].Enabled || got[0].Commit != commit || got[0].Version != "1.2" {
			t.Fatalf("installed from %s: %+v", src, got)
		}
		var meta skills.Meta
		b, err := os.ReadFile(filepath.Join(lib.Dir(), "log-triage", skills.MetaFile))
		if err != nil || json.Unmarshal(b, &meta) != nil || meta.Enabled || meta.Commit != commit || meta.InstalledAt.IsZero() {
			t.Fatalf(".legate.json: %s %v", b, err)
		}
		if _, err := lib.Install(context.Background(), src); err == nil {
			t.Fatal("installing a skill twice replaced it")
		}
		if err := lib.Remove("log-triage"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(lib.Dir(), "log-triage")); !os.IsNotExist(err) {
		t.Fatalf("rm left the skill: %v", err)
	}
}

func TestDescriptionWarning(t *testing.T) {
	for desc, warn := range map[string]bool{
		"Postgres backup skill.": true,
		"postgres-backup":        true,
		"The Postgres Backup":    true,
		"Use before upgrading Postgres: takes a backup and checks it restores.": false,
	} {
		if got := skills.DescriptionWarning("postgres-backup", desc) != ""; got != warn {
			t.Errorf("%q: warning %v, want %v", desc, got, warn)
		}
	}
}

// A clone that grows past the library's bound is stopped: a repository
// must not fill the disk before its skills are found.
func TestInstallStopsAnOversizedClone(t *testing.T) {
	repo, _ := gitRepo(t)
	big := make([]byte, 4<<20)
	rand.Read(big) // incompressible
	if err := os.WriteFile(filepath.Join(repo, "blob.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "a large file"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	lib := skills.Open(t.TempDir())
	lib.MaxCloneBytes = 1 << 20
	_, err := lib.Install(context.Background(), "file://"+repo)
	if err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("installing from a repository past the bound: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(lib.Dir(), ".clone-*")); len(left) > 0 {
		t.Errorf("the stopped clone left %v", left)
	}
	lib.MaxCloneBytes = 0 // the default bound takes it
	if got, err := lib.Install(context.Background(), "file://"+repo); err != nil || len(got) != 1 {
		t.Fatalf("installing within the default bound: %v %+v", err, got)
	}
}
