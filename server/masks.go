package server

import (
	"cmp"
	"context"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/provenance"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// Every secret the gateway holds is masked by its value in what execute
// returns, before the audit, a stored outcome, the agent or the client
// sees it, and in what upstreams' prompts and resources answer. The mask
// set holds the configuration's secrets, resolved when it is loaded
// (pinSecrets), and those resolved at call time (by the resolvers and the
// connections manager).

// pinSecrets pins the values of every credential the instances in use and
// the upstreams ups reference, and the admin token, in g's mask set.
func pinSecrets(ctx context.Context, g *Gateway, ups []upstream.Def) {
	g.masks.Pin("config", append(sources.SecretValues(ctx, &vault.Resolver{Vault: g.opts.Vault}, g.Instances(), ups), g.opts.AdminToken)...)
}

// maskResult masks every secret of s in a call's result and error.
func maskResult(s *legate.Secrets, res *Result, err error) (*Result, error) {
	if s.Empty() {
		return res, err
	}
	if res != nil && res.Raw != nil {
		res.Raw = s.Mask(res.Raw, false)
	}
	if res != nil && res.MCP != nil {
		res.MCP = toolresult.Mask(s, res.MCP)
	}
	return res, toolresult.MaskError(s, err)
}

// mark gives a connector's or an upstream's result its provenance
// (package provenance); the gateway's own tools' results have none.
func mark(r *Request, res *Result, spotlight bool) {
	s := subjectOf(r)
	if res == nil || res.inputRequired || s.Connector == builtinSource || res.MCP != nil && res.MCP.NeedsInput() {
		return
	}
	m := provenance.New(cmp.Or(s.Connector, "mcp."+s.Upstream), r.Entry.Canonical)
	res.Raw = toolresult.MarkRaw(res.Raw, m, spotlight)
	provenance.Set(res.MCP, m, spotlight)
}
