package host_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/connectors/host/skills"
)

const triageSkill = `---
name: log-triage
description: Use when a service misbehaves and its logs must be read to find the first error and its cause.
tags: [ops, logs]
version: "1.2"
---
# Log triage

PROCEDURE-BODY-MARKER: run scripts/triage.sh, then read the first ERROR line.
`

// gitRepo makes a git repository holding skills/log-triage, committed.
func gitRepo(t *testing.T) (dir, commit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	writeFiles(t, filepath.Join(dir, "skills", "log-triage"), map[string]string{
		"SKILL.md":          triageSkill,
		"scripts/triage.sh": "#!/bin/sh\ngrep -m1 ERROR \"$1\"\n",
	})
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
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

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Enabling a skill in the library a running gateway serves makes the
// skills tools and the instructions line appear, with tools/list_changed.
func TestSkillEnableReachesClients(t *testing.T) {
	repo, _ := gitRepo(t)
	lib := skills.Open(t.TempDir())
	if _, err := lib.Install(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, "workspace_root: "+t.TempDir()+"\nskills_dir: "+lib.Dir())
	changed := make(chan struct{}, 10)
	cs := g.connect(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	if slices.Contains(toolNames(t, cs), "host.skills_list") {
		t.Fatal("skills tools listed while no skill is enabled")
	}
	if strings.Contains(cs.InitializeResult().Instructions, "log-triage") {
		t.Fatal("a disabled skill is in the instructions")
	}

	if err := lib.SetEnabled("log-triage", true); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed)
	names := toolNames(t, cs)
	for _, want := range []string{"host.skills_list", "host.skills_load", "host.skills_file"} {
		if !slices.Contains(names, want) {
			t.Fatalf("%s not listed after enabling: %v", want, names)
		}
	}
	instr := g.connect(t, nil).InitializeResult().Instructions
	if !strings.Contains(instr, "\n- log-triage: Use when a service misbehaves") || strings.Contains(instr, "PROCEDURE-BODY-MARKER") {
		t.Fatalf("instructions: %q", instr)
	}
	list := ok(t, cs, "skills_list", map[string]any{})
	if toJSON(list) != `{"skills":[{"description":"Use when a service misbehaves and its logs must be read to find the first error and its cause.","name":"log-triage","tags":["ops","logs"],"version":"1.2"}]}` {
		t.Fatalf("skills_list: %s", toJSON(list))
	}
	load := ok(t, cs, "skills_load", map[string]any{"name": "log-triage"})
	if load["content"] != triageSkill || toJSON(load["files"]) != `["scripts/triage.sh"]` {
		t.Fatalf("skills_load: %v", load)
	}
	f := ok(t, cs, "skills_file", map[string]any{"name": "log-triage", "path": "scripts/triage.sh"})
	if !strings.Contains(f["content"].(string), "grep -m1 ERROR") {
		t.Fatalf("skills_file: %v", f)
	}
	for _, p := range []string{"../log-triage/SKILL.md/../../x", "../../", "/etc/passwd", "../other/SKILL.md"} {
		if o := call(t, cs, "skills_file", map[string]any{"name": "log-triage", "path": p}); !o.isError {
			t.Errorf("skills_file %s: %s", p, o.text)
		}
	}
	fails(t, cs, "skills_load", map[string]any{"name": "../x"}, "INVALID_ARGUMENT")

	if err := lib.SetEnabled("log-triage", false); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed)
	if slices.Contains(toolNames(t, cs), "host.skills_load") {
		t.Fatal("skills tools still listed after disabling the last skill")
	}
}

// waitChanged waits for a tools/list_changed notification; the gateway
// looks at the library every 20ms here, so a minute means it never came.
func waitChanged(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal("no notifications/tools/list_changed")
	}
}

// A skill directory in the public Agent Skills format, with keys Legate
// does not use, loads unchanged; a symlink in it is not installed.
func TestSkillPublicFormatLoadsUnchanged(t *testing.T) {
	skill := "---\nname: pdf-forms\ndescription: Fill in PDF forms. Use when the user asks to complete, fill or extract fields of a PDF form.\nlicense: Apache-2.0\nallowed-tools: [Bash, Read]\nmetadata:\n  author: example\n---\n\n# PDF forms\n\nSee [reference](reference/fields.md).\r\n"
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"SKILL.md": skill, "reference/fields.md": "# Fields\n", "scripts/fill.py": "print('fill')\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "passwd")); err != nil {
		t.Fatal(err)
	}
	lib := skills.Open(t.TempDir())
	got, err := lib.Install(context.Background(), src)
	if err != nil || len(got) != 1 || got[0].Enabled || got[0].Warning != "" {
		t.Fatalf("install: %+v %v", got, err)
	}
	if err := lib.SetEnabled("pdf-forms", true); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, "workspace_root: "+t.TempDir()+"\nskills_dir: "+lib.Dir())
	cs := g.connect(t, nil)
	load := ok(t, cs, "skills_load", map[string]any{"name": "pdf-forms"})
	if load["content"] != skill {
		t.Fatalf("SKILL.md changed: %q", load["content"])
	}
	if toJSON(load["files"]) != `["reference/fields.md","scripts/fill.py"]` {
		t.Fatalf("files: %v", load["files"])
	}
	if _, err := os.Lstat(filepath.Join(lib.Dir(), "pdf-forms", "passwd")); !os.IsNotExist(err) {
		t.Fatalf("a symlink was installed: %v", err)
	}
}
