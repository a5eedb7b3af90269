package operations

import (
	"context"
	"net/http"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/connectors/host/skills"
)

// SkillOps are the skills library's operations (list, install, enable,
// disable) as the admin API offers them, over the library `legate skills`
// manages, and what the agent's system prompt is made of now.
type SkillOps struct{ *parts }

// library is the skills library, or the error of a server that has none.
func (o *SkillOps) library() (*skills.Library, error) {
	if o.p.Skills == nil {
		return nil, &admin.Error{Status: http.StatusNotFound, Message: "this server keeps no skills library"}
	}
	return o.p.Skills(), nil
}

// Skills lists the installed skills (skills.Library.List).
func (o *SkillOps) Skills(context.Context) ([]skills.Skill, error) {
	lib, err := o.library()
	if err != nil {
		return nil, err
	}
	return lib.List()
}

// InstallSkill installs the skills of src, a directory or a git
// repository, disabled (skills.Library.Install).
func (o *SkillOps) InstallSkill(ctx context.Context, src string) (got []skills.Skill, err error) {
	defer func() { o.audited(ctx, "skills.install", "skills of "+src, err) }()
	lib, err := o.library()
	if err != nil {
		return nil, err
	}
	got, err = lib.Install(ctx, strings.TrimSpace(src))
	if err != nil && legate.CodeOf(err) != legate.CodeNotFound {
		// What keeps a source from installing is the source's: a path or
		// repository without SKILL.md, a clone that failed, a skill too big.
		return got, &admin.Error{Status: http.StatusBadRequest, Message: err.Error()}
	}
	return got, skillError(err)
}

// SetSkillEnabled enables or disables an installed skill
// (skills.Library.SetEnabled).
func (o *SkillOps) SetSkillEnabled(ctx context.Context, name string, on bool) (err error) {
	action := "skills.disable"
	if on {
		action = "skills.enable"
	}
	defer func() { o.audited(ctx, action, "skill "+name, err) }()
	lib, err := o.library()
	if err != nil {
		return err
	}
	return skillError(lib.SetEnabled(name, on))
}

// AgentPrompt is the system prompt the agent's runs get now (agent.Prompt),
// "" on a server that cannot say.
func (o *SkillOps) AgentPrompt(context.Context) string {
	if o.p.AgentPrompt == nil {
		return ""
	}
	return o.p.AgentPrompt()
}

// skillError is an error of the library with the status the admin API
// answers it with: an unknown skill is 404, a bad name or source 400.
func skillError(err error) error {
	if err == nil {
		return nil
	}
	switch legate.CodeOf(err) {
	case legate.CodeNotFound:
		return &admin.Error{Status: http.StatusNotFound, Message: err.Error()}
	case legate.CodeInvalidArgument:
		return &admin.Error{Status: http.StatusBadRequest, Message: err.Error()}
	}
	return err
}
