package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// Every secret the gateway holds is masked by its value in every result
// and error a call returns, before the call path above execute sees it:
// so before the audit, the stored outcome of an approved call, the agent
// or the client. A tool that never meant to return a secret (host_env,
// sh_exec reading a file, a provider echoing a header into a field)
// returns [redacted] in its place.
//
// The mask set (vault.Masks) holds the values the configuration
// references, resolved when it is loaded (pinSecrets: masked before any
// call used them), and those resolved at call time (a tenant's vault
// secret, people's tokens: the resolvers and the connections manager add
// them).

// pinSecrets resolves every credential the configuration in use and defs
// (the upstreams) reference and pins their values in the mask set. A
// reference that cannot be resolved now is skipped: the call that needs
// it fails, naming it, and resolves nothing to mask.
func (g *Gateway) pinSecrets(ctx context.Context, l *live, defs []upstream.Def) {
	r := &vault.Resolver{Vault: g.opts.Vault}
	values := []string{g.opts.AdminToken}
	for _, in := range l.instances {
		d := in.def
		for _, ref := range d.Credentials {
			if v, err := r.Resolve(ctx, d.Tenant, ref); err == nil {
				values = append(values, v)
			}
		}
		if d.OAuth != nil && d.OAuth.ClientSecret != nil {
			if v, err := r.Resolve(ctx, d.Tenant, *d.OAuth.ClientSecret); err == nil {
				values = append(values, v)
			}
		}
	}
	for _, d := range defs {
		for _, env := range d.Config.HeaderEnv {
			values = append(values, os.Getenv(env))
		}
	}
	g.masks.Pin("config", values...)
}

// maskResult masks every secret in res and err as they leave execute.
func (g *Gateway) maskResult(res *Result, err error) (*Result, error) {
	s := g.masks.Secrets()
	if s.Empty() {
		return res, err
	}
	if err != nil {
		err = maskError(s, err)
	}
	if res == nil {
		return res, err
	}
	if res.Raw != nil {
		res.Raw = s.Mask(res.Raw, false)
	}
	if res.MCP != nil {
		res.MCP = maskCallResult(s, res.MCP)
	}
	return res, err
}

// maskError masks the message a client or the log sees of err. A
// *legate.Error keeps its code; a protocol error (*jsonrpc.Error, from an
// upstream) is left as it is when it holds no secret.
func maskError(s *legate.Secrets, err error) error {
	var ce *legate.Error
	if errors.As(err, &ce) {
		if !s.Contains([]byte(ce.Error())) {
			return err
		}
		masked := *ce
		masked.Message = s.MaskString(ce.Message)
		if ce.Err != nil {
			masked.Err = errors.New(s.MaskString(ce.Err.Error()))
		}
		return &masked
	}
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		if !s.Contains([]byte(re.Message)) && !s.Contains(re.Data) {
			return err
		}
		masked := *re
		masked.Message = s.MaskString(re.Message)
		if re.Data != nil {
			masked.Data = s.Mask(re.Data, false)
		}
		return &masked
	}
	if !s.Contains([]byte(err.Error())) {
		return err
	}
	return &legate.Error{Code: legate.CodeOf(err), Message: s.MaskString(err.Error())}
}

// maskCallResult masks res. The shape native tools return (text contents
// and raw structured content) is masked in place; any other is masked as
// its JSON, decoded again only when it held a secret.
func maskCallResult(s *legate.Secrets, res *mcp.CallToolResult) *mcp.CallToolResult {
	simple := res.Meta == nil
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			simple = false
		}
	}
	raw, rawOK := res.StructuredContent.(json.RawMessage)
	if simple && (res.StructuredContent == nil || rawOK) {
		for _, c := range res.Content {
			t := c.(*mcp.TextContent)
			t.Text = s.MaskString(t.Text)
		}
		if rawOK {
			res.StructuredContent = json.RawMessage(s.Mask(raw, false))
		}
		return res
	}
	if out := maskJSON(s, res); out != nil {
		return out
	}
	// Masking cut a structure it should not have: withhold it all.
	return &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: legate.Redacted}}}
}

// maskJSON masks v as its JSON, decoded again only when it held a
// secret; nil when the masked JSON no longer decodes.
func maskJSON[T any](s *legate.Secrets, v *T) *T {
	b, err := json.Marshal(v)
	if err != nil || !s.Contains(b) {
		return v
	}
	var out T
	if json.Unmarshal(s.Mask(b, false), &out) != nil {
		return nil
	}
	return &out
}

// maskRead masks what an upstream's prompts/get or resources/read
// answered, as execute's maskResult masks a tool's result.
func maskRead[T any](g *Gateway, res *T, err error) (*T, error) {
	s := g.masks.Secrets()
	if s.Empty() {
		return res, err
	}
	if err != nil {
		err = maskError(s, err)
	}
	if res != nil {
		if res = maskJSON(s, res); res == nil {
			return nil, &legate.Error{Code: legate.CodeAdapterMapping, Message: "the answer held a secret and was withheld"}
		}
	}
	return res, err
}
