package operations

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/connectors/host/skills"
)

// SkillOps are the skills library's operations (list, install, enable,
// disable) as the admin API offers them, over the library `legate skills`
// manages, and what the agent's system prompt is made of now.
type SkillOps struct{ *parts }

// library is the skills library the host connector reads: the skills_dir
// of the first host connector that sets one, else the skills folder of the
// state directory, where legate skills installs them.
func (o *SkillOps) library() *skills.Library {
	for _, c := range o.p.Config().Connectors {
		var hc struct {
			SkillsDir string `yaml:"skills_dir"`
		}
		if c.Type == "host" && c.Config.Decode(&hc) == nil && hc.SkillsDir != "" {
			return skills.Open(hc.SkillsDir)
		}
	}
	return skills.Open(skills.DefaultDir(o.p.StateDir))
}

// Skills lists the installed skills (skills.Library.List).
func (o *SkillOps) Skills(context.Context) ([]skills.Skill, error) {
	return o.library().List()
}

// InstallSkill installs the skills of src, a git repository's https URL,
// disabled (skills.Library.Install). Through the admin API and the panel
// a caller names no path of the server's machine, nor another of git's
// transports (file://, ssh, ext::): `legate skills install` on that
// machine installs a local directory.
func (o *SkillOps) InstallSkill(ctx context.Context, src string) (got []skills.Skill, err error) {
	src = strings.TrimSpace(src)
	defer func() { o.audited(ctx, "skills.install", "skills of "+skills.RedactURL(src), err) }()
	if u, perr := url.Parse(src); perr != nil || u.Scheme != "https" || u.Host == "" {
		return nil, &admin.Error{Status: http.StatusBadRequest, Message: "skills are installed from a git repository's https URL here; install a directory of the server's machine with legate skills install PATH there"}
	}
	got, err = o.library().Install(ctx, src)
	if err != nil {
		// What keeps a source from installing is the source's: a path or
		// repository without SKILL.md, a clone that failed, a skill too big.
		return got, &admin.Error{Status: http.StatusBadRequest, Message: err.Error()}
	}
	return got, nil
}

// SetSkillEnabled enables or disables an installed skill
// (skills.Library.SetEnabled).
func (o *SkillOps) SetSkillEnabled(ctx context.Context, name string, on bool) (err error) {
	action := "skills.disable"
	if on {
		action = "skills.enable"
	}
	defer func() { o.audited(ctx, action, "skill "+name, err) }()
	return skillError(o.library().SetEnabled(name, on))
}

// AgentPrompt is the system prompt the agent's runs get now (agent.Prompt),
// made of the instructions the MCP server sends.
func (o *SkillOps) AgentPrompt(context.Context) string {
	var instructions string
	if o.p.Instructions != nil {
		instructions = o.p.Instructions()
	}
	return agent.Prompt(o.p.Config(), instructions)
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
