package panel

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/legate-mcp/legate/admin"
)

// agentRecord is what the agent page shows of a run's record.
type agentRecord struct {
	Reply      string   `json:"reply"`
	Turns      int      `json:"turns"`
	Stopped    string   `json:"stopped"`
	Error      string   `json:"error"`
	Host       string   `json:"host"`
	Workspace  string   `json:"workspace"`
	Model      string   `json:"model"`
	ToolsUsed  []string `json:"tools_used"`
	SkillsUsed []string `json:"skills_used"`
	Retries    int      `json:"retries"`
	Usage      struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Waiting *struct {
		ApprovalID string `json:"approval_id"`
		Tool       string `json:"tool"`
	} `json:"waiting"`
	Calls []struct {
		Turn       int             `json:"turn"`
		Tool       string          `json:"tool"`
		Arguments  json.RawMessage `json:"arguments"`
		Result     string          `json:"result"`
		IsError    bool            `json:"is_error"`
		ApprovalID string          `json:"approval_id"`
	} `json:"calls"`
}

// agent is the agent's history: its runs, the latest first, and with
// ?id= one run's record, every call with its result.
func (p *Panel) agent(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	q := r.URL.Query()
	if id := q.Get("id"); id != "" {
		var run admin.AgentRun
		if err := p.call(r.Context(), s, "GET", "/admin/v1/agent/runs/"+url.PathEscape(id), nil, &run); err != nil {
			data["Error"] = problem(err)
		} else {
			var rec agentRecord
			json.Unmarshal(run.Record, &rec)
			data["Run"], data["Record"] = run, rec
		}
	}
	args := url.Values{}
	if v := q.Get("principal"); v != "" {
		args.Set("principal", v)
	}
	var page struct {
		Runs []admin.AgentRun `json:"runs"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/agent/runs?"+args.Encode(), nil, &page); err != nil {
		data["Error"] = problem(err)
	}
	data["Runs"], data["Principal"] = page.Runs, q.Get("principal")
	p.render(w, "agent", s, data)
}
