package admin

import (
	"context"
	"net/http"

	"github.com/legate-mcp/legate/connectors/host/skills"
)

// SkillOps are the operations behind /admin/v1/skills: the skills library
// `legate skills` manages, and what the agent sees. An Ops without them
// answers 404 there.
type SkillOps interface {
	// Skills lists the installed skills.
	Skills(ctx context.Context) ([]skills.Skill, error)
	// InstallSkill installs the skills of a directory or git repository,
	// disabled.
	InstallSkill(ctx context.Context, src string) ([]skills.Skill, error)
	// SetSkillEnabled enables or disables an installed skill.
	SetSkillEnabled(ctx context.Context, name string, on bool) error
	// AgentPrompt is the system prompt the agent's runs get now: the
	// enabled skills' lines and the connectors' among it.
	AgentPrompt(ctx context.Context) string
}

// Skills is GET /admin/v1/skills: the installed skills, and the system
// prompt they and the tools make for the agent.
type Skills struct {
	Skills      []skills.Skill `json:"skills"`
	AgentPrompt string         `json:"agent_prompt"`
}

// skillsAPI serves /admin/v1/skills.
type skillsAPI struct{ *api }

// skillOps is the SkillOps of the API for a caller with the admin role:
// skills become standing instructions on the machine.
func (h skillsAPI) skillOps(w http.ResponseWriter, r *http.Request) SkillOps {
	if h.manage(w, r) == nil {
		return nil
	}
	s, ok := h.ops.(SkillOps)
	if !ok {
		writeJSONError(w, http.StatusNotFound, "this server has no "+r.URL.Path)
	}
	return s
}

func (h skillsAPI) listSkills(w http.ResponseWriter, r *http.Request) {
	s := h.skillOps(w, r)
	if s == nil {
		return
	}
	list, err := s.Skills(r.Context())
	if list == nil {
		list = []skills.Skill{}
	}
	answer(w, Skills{Skills: list, AgentPrompt: s.AgentPrompt(r.Context())}, err)
}

func (h skillsAPI) installSkill(w http.ResponseWriter, r *http.Request) {
	s := h.skillOps(w, r)
	var body struct {
		Source string `json:"source"`
	}
	if s == nil || !decode(w, r, &body, `{"source": "a directory holding SKILL.md, or a git repository URL"}`) {
		return
	}
	got, err := s.InstallSkill(r.Context(), body.Source)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"installed": got})
}

func (h skillsAPI) skillAction(w http.ResponseWriter, r *http.Request) {
	s := h.skillOps(w, r)
	if s == nil {
		return
	}
	name, verb := r.PathValue("name"), r.PathValue("verb")
	if verb != "enable" && verb != "disable" {
		writeJSONError(w, http.StatusNotFound, "no such action on a skill: "+verb+" (enable or disable)")
		return
	}
	err := s.SetSkillEnabled(r.Context(), name, verb == "enable")
	answer(w, map[string]any{"name": name, "enabled": verb == "enable"}, err)
}
