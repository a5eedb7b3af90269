package admin_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/host/skills/skillstest"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/store"
)

// The skills routes run the skills library's operations: install arrives
// disabled, enable and disable change the listing, the answer carries the
// agent's prompt made of the server's instructions, mistakes have their
// statuses, and every change is audited.
func TestSkillsRoutes(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(t.TempDir(), "log-triage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: log-triage\ndescription: Use when a service misbehaves and its logs must be read.\n---\nRead the logs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := skillstest.HTTPSRepo(t, dir)
	cfg := &config.File{}
	var audited []store.AuditRow
	ops := operations.New(operations.Parts{Config: func() *config.File { return cfg }, StateDir: state, Principal: "ann",
		Audit: func(r store.AuditRow) { audited = append(audited, r) }, Instructions: func() string { return "INSTRUCTIONS-MARKER" }})
	h := admin.Handler(ops, &admin.Options{Token: "right"})
	list := func() admin.Skills {
		t.Helper()
		w := do(h, "GET", "/admin/v1/skills", "right", "")
		var got admin.Skills
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &got) != nil {
			t.Fatalf("GET /admin/v1/skills: %d %s", w.Code, w.Body)
		}
		return got
	}
	if got := list(); len(got.Skills) != 0 || !strings.Contains(got.AgentPrompt, "You are Legate's agent") || !strings.Contains(got.AgentPrompt, "INSTRUCTIONS-MARKER") {
		t.Errorf("before any install: %+v", got)
	}
	body, _ := json.Marshal(map[string]string{"source": src})
	if w := do(h, "POST", "/admin/v1/skills", "right", string(body)); w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"name": "log-triage"`) {
		t.Fatalf("install: %d %s", w.Code, w.Body)
	}
	if _, err := os.Stat(filepath.Join(state, "skills", "log-triage", "SKILL.md")); err != nil {
		t.Errorf("not installed in the state directory's skills folder: %v", err)
	}
	if got := list(); len(got.Skills) != 1 || got.Skills[0].Enabled || got.Skills[0].Source != src {
		t.Errorf("after install: %+v", got.Skills)
	}
	if w := do(h, "POST", "/admin/v1/skills/log-triage/enable", "right", ""); w.Code != http.StatusOK {
		t.Fatalf("enable: %d %s", w.Code, w.Body)
	}
	if got := list(); !got.Skills[0].Enabled {
		t.Errorf("after enable: %+v", got.Skills)
	}
	if w := do(h, "POST", "/admin/v1/skills/log-triage/disable", "right", ""); w.Code != http.StatusOK || list().Skills[0].Enabled {
		t.Errorf("disable: %d %s", w.Code, w.Body)
	}
	for name, tc := range map[string]struct {
		path, body string
		status     int
	}{
		"an unknown skill":         {"/admin/v1/skills/nope/enable", "", http.StatusNotFound},
		"a bad name":               {"/admin/v1/skills/..%2Fx/enable", "", http.StatusBadRequest},
		"an unknown verb":          {"/admin/v1/skills/log-triage/remove", "", http.StatusNotFound},
		"a repository without one": {"/admin/v1/skills", `{"source": "` + skillstest.HTTPSRepo(t, t.TempDir()) + `"}`, http.StatusBadRequest},
		"no source":                {"/admin/v1/skills", `{"source": ""}`, http.StatusBadRequest},
		// No path of the server's machine, nor another of git's transports.
		"a local directory": {"/admin/v1/skills", `{"source": "` + dir + `"}`, http.StatusBadRequest},
		"a file:// URL":     {"/admin/v1/skills", `{"source": "file://` + dir + `"}`, http.StatusBadRequest},
		"an ext:: command":  {"/admin/v1/skills", `{"source": "ext::sh -c touch% /tmp/pwned"}`, http.StatusBadRequest},
		"a plain http URL":  {"/admin/v1/skills", `{"source": "http://127.0.0.1:1/skills.git"}`, http.StatusBadRequest},
		"an ssh repository": {"/admin/v1/skills", `{"source": "git@github.com:acme/skills.git"}`, http.StatusBadRequest},
	} {
		if w := do(h, "POST", tc.path, "right", tc.body); w.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", name, w.Code, w.Body, tc.status)
		}
	}
	var tools []string
	for _, r := range audited {
		tools = append(tools, r.Tool+":"+r.Outcome)
	}
	for _, want := range []string{"admin.skills.install:ok", "admin.skills.enable:ok", "admin.skills.disable:ok", "admin.skills.enable:NOT_FOUND"} {
		if !strings.Contains(strings.Join(tools, " "), want) {
			t.Errorf("audit rows %q lack %s", tools, want)
		}
	}
}
