package agent

import (
	"context"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/profiles"
)

// RunArgs are legate.agent.run's arguments.
type RunArgs struct {
	Instruction  string         `json:"instruction" jsonschema:"What to do, in plain words: the agent chooses the steps among the tools of your profile on this machine"`
	Model        string         `json:"model,omitempty" jsonschema:"The model to use instead of agent.model's"`
	ModelProfile map[string]any `json:"model_profile,omitempty" jsonschema:"A whole model profile instead of agent.model (provider, model, url, access_token, temperature, max_tokens, request_timeout, max_retries; keys matched leniently); only for admins, or without authentication; its max_tokens, request_timeout and max_retries are capped by agent.model's"`
	MaxTurns     int            `json:"max_turns,omitempty" jsonschema:"Model turns the run may take (default and ceiling: agent.max_turns; a larger value is capped by it)"`
	Workspace    string         `json:"workspace,omitempty" jsonschema:"The directory the instruction is about"`
	Resume       string         `json:"resume,omitempty" jsonschema:"A run id of yours whose conversation this run continues"`
	Context      any            `json:"context,omitempty" jsonschema:"JSON the instruction and workspace are templates over: {{$.path}} reads it, {{$this}} and {{$this.field}} the element of the run"`
	Scope        string         `json:"scope,omitempty" jsonschema:"With context: $.path[*] runs once per element of that array (the result is {runs: [records]}), each continuing the conversation of the one before unless fresh"`
	Fresh        bool           `json:"fresh,omitempty" jsonschema:"With a scope: start each run afresh (unrelated tasks)"`
}

// Builtin is the built-in tool legate.agent.run [write]: it runs the agent
// as its caller, under the caller's principal and profile, and returns the
// run's record as structured content. Its run is bounded by call_timeout
// as every native call is, and by agent.deadline.
func (r *Runner) Builtin() connectors.Builtin {
	tool := connectors.NewTool("agent.run",
		"Hand this machine a unit of work: an instruction in, the work done with the tools of your profile here "+
			"(every call through policy, approvals and audit), a record out: reply, turns, stopped (answered, max_turns, max_tool_calls, deadline, error), "+
			"tools_used, skills_used, usage, retries, every call with its result, and the conversation (resume it with resume: id).",
		legate.ClassWrite,
		func(ctx context.Context, call *connectors.Call, in *RunArgs) (*legate.Result, error) {
			p, _, _ := profiles.CallerOf(ctx)
			if in.ModelProfile != nil && p != nil && !p.HasRole(auth.RoleAdmin) {
				return nil, legate.Errorf(legate.CodePolicyDenied, "model_profile is for admins: it says where the conversation is sent; name a model instead")
			}
			req := Request{Instruction: strings.TrimSpace(in.Instruction), Principal: p, Caller: call.Caller.Principal,
				Model: in.Model, ModelProfile: in.ModelProfile, MaxTurns: in.MaxTurns, Workspace: in.Workspace, Resume: in.Resume}
			if req.Instruction == "" {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "instruction: say what the agent should do")
			}
			if in.Context != nil || in.Scope != "" {
				recs, err := r.RunEach(ctx, req, in.Context, in.Scope, in.Fresh)
				if err != nil && len(recs) == 0 {
					return nil, legate.Errorf(legate.CodeInvalidArgument, "%v", err)
				}
				if strings.HasSuffix(strings.TrimSpace(in.Scope), "[*]") {
					out := map[string]any{"runs": recs}
					if err != nil {
						out["error"] = err.Error()
					}
					return &legate.Result{Structured: out}, nil
				}
				return &legate.Result{Structured: recs[0]}, nil
			}
			rec, err := r.Run(ctx, req)
			if err != nil {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "%v", err)
			}
			return &legate.Result{Structured: rec}, nil
		})
	return connectors.Builtin{Instance: "legate", Tool: tool}
}
