package panel

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/legate-mcp/legate/admin"
)

// skillsPage is the skills page and its forms.
type skillsPage struct{ *Panel }

// list lists the installed skills with a button each to enable or
// disable it, a form to install more, and what the agent sees: the system
// prompt its runs get, the enabled skills' lines among it.
func (p skillsPage) list(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	var list admin.Skills
	if err := p.call(r.Context(), s, "GET", "/admin/v1/skills", nil, &list); err != nil {
		data["Error"] = problem(err)
	}
	data["Skills"], data["AgentPrompt"] = list.Skills, list.AgentPrompt
	p.render(w, "skills", s, data)
}

// install turns the form into POST /admin/v1/skills, as `legate
// skills install PATH|GIT-URL` does.
func (p skillsPage) install(w http.ResponseWriter, r *http.Request, s *session) {
	var res struct {
		Installed []struct {
			Name string `json:"name"`
		} `json:"installed"`
	}
	err := p.call(r.Context(), s, "POST", "/admin/v1/skills", map[string]string{"source": strings.TrimSpace(r.PostFormValue("source"))}, &res)
	var names []string
	for _, i := range res.Installed {
		names = append(names, i.Name)
	}
	back(w, r, "/skills", fmt.Sprintf("installed %s, disabled: read each before enabling it", strings.Join(names, ", ")), err)
}

// action enables or disables a skill.
func (p skillsPage) action(w http.ResponseWriter, r *http.Request, s *session) {
	name, verb := r.PathValue("name"), r.PathValue("verb")
	if verb != "enable" && verb != "disable" {
		http.NotFound(w, r)
		return
	}
	err := p.call(r.Context(), s, "POST", "/admin/v1/skills/"+url.PathEscape(name)+"/"+verb, nil, nil)
	back(w, r, "/skills", verb+"d "+name+"; the agent's instructions follow within a second", err)
}
