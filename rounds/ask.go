package rounds

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// The go-sdk checks an elicitation's requested schema against its own
// reading of the spec, on both sides: the client refuses some requests
// before its handler runs (titled multi-select enums, for one), and the
// server checks the user's answer after the client sent it. A relay must
// pass the request and the answer through as they are, so:
//   - Elicit asks a client and returns its own answer;
//   - CaptureElicitResult, a sending middleware the gateway installs on its
//     server, keeps the client's answer, which Elicit returns even when the
//     SDK's check of it fails.

type elicitSlotKey struct{}

type elicitSlot struct{ res *mcp.ElicitResult }

// CaptureElicitResult records the answer to an elicitation/create sent
// with a context from Elicit.
func CaptureElicitResult(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if slot, ok := ctx.Value(elicitSlotKey{}).(*elicitSlot); ok && err == nil {
			if r, ok := res.(*mcp.ElicitResult); ok {
				slot.res = r
			}
		}
		return res, err
	}
}

// Elicit asks the client of ss, returning the client's own answer.
func Elicit(ctx context.Context, ss *mcp.ServerSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	slot := &elicitSlot{}
	res, err := ss.Elicit(context.WithValue(ctx, elicitSlotKey{}, slot), p)
	if err != nil && slot.res != nil {
		return slot.res, nil
	}
	return res, err
}

// RelayElicitation is a receiving middleware of an upstream client whose
// session serves one client: it answers elicitation/create by asking that
// client (Elicit), without the client SDK's schema check. of gives the
// context to ask on and the client's session.
func RelayElicitation(of func(context.Context) (context.Context, *mcp.ServerSession)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ElicitRequest); ok {
				if cctx, owner := of(ctx); owner != nil {
					return Elicit(cctx, owner, r.Params)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// Fulfil asks the client of ss, which has a session (protocol 2025-11-25 or
// earlier), for the input an upstream's input_required result requests, as
// the go-sdk server does for such clients, and returns the answers as the
// inputResponses of the retry.
func Fulfil(ctx context.Context, ss *mcp.ServerSession, reqs mcp.InputRequestMap) (json.RawMessage, error) {
	g, ctx := errgroup.WithContext(ctx)
	var mu sync.Mutex
	out := make(map[string]mcp.Result, len(reqs))
	for key, ir := range reqs {
		g.Go(func() error {
			res, err := AskSession(ctx, ss, ir)
			if err != nil {
				return fmt.Errorf("input request %q: %w", key, err)
			}
			mu.Lock()
			out[key] = res
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// Meta is the _meta of a request sent on for a client of protocol
// 2026-07-28: the keys of the client's own _meta (its object, clientMeta)
// by which it names its protocol, itself, its capabilities and the log
// level it wants, so that the upstream answers it as it would answer the
// client, and progressToken when token is set. On a session of an earlier
// protocol (onSession), which refuses a request naming protocol
// 2026-07-28, the protocol's key is left out: the capabilities the client
// declares still tell the upstream what it may ask the client for. The
// tasks extension is left out unless keepTasks (and not onSession): for a
// request whose caller hands the upstream's tasks through to the client.
func Meta(clientMeta json.RawMessage, token string, onSession, keepTasks bool) json.RawMessage {
	var in map[string]json.RawMessage
	json.Unmarshal(clientMeta, &in)
	out := make(map[string]json.RawMessage, len(in)+1)
	for k, v := range in {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") && k != mcp.MetaKeyServerInfo && k != mcp.MetaKeySubscriptionID && (!onSession || k != mcp.MetaKeyProtocolVersion) {
			out[k] = v
		}
	}
	if caps, ok := out[mcp.MetaKeyClientCapabilities]; ok && (onSession || !keepTasks) && bytes.Contains(caps, []byte(tasksExtension)) {
		out[mcp.MetaKeyClientCapabilities] = withoutTasks(caps)
	}
	if token != "" {
		out["progressToken"], _ = json.Marshal(token)
	}
	b, _ := json.Marshal(out)
	return b
}

// tasksExtension is the tasks extension (SEP-2663), which Legate offers
// for the calls it holds for approval (package tasks). A request sent on
// declares it only where its caller hands the upstream's tasks through:
// elsewhere their ids would reach the client, which asks Legate about them.
const tasksExtension = "io.modelcontextprotocol/tasks"

// withoutTasks is client capabilities caps without the tasks extension.
func withoutTasks(caps json.RawMessage) json.RawMessage {
	var c map[string]json.RawMessage
	var ext map[string]json.RawMessage
	if json.Unmarshal(caps, &c) != nil || json.Unmarshal(c["extensions"], &ext) != nil {
		return caps
	}
	delete(ext, tasksExtension)
	if len(ext) == 0 {
		delete(c, "extensions")
	} else {
		c["extensions"], _ = json.Marshal(ext)
	}
	b, _ := json.Marshal(c)
	return b
}

// AppendParams appends to the params of a request being written (body, an
// object left open) what a round carries: the client's answers
// (responses, a JSON object), the upstream's request state, and meta (of
// Meta).
func AppendParams(body []byte, responses json.RawMessage, state string, meta json.RawMessage) []byte {
	if len(responses) > 0 {
		body = append(append(body, `,"inputResponses":`...), responses...)
	}
	if state != "" {
		b, _ := json.Marshal(state)
		body = append(append(body, `,"requestState":`...), b...)
	}
	return append(append(body, `,"_meta":`...), meta...)
}

// SetParams sets what round r carries on the params of a call sent
// through the SDK client on a session of an earlier protocol: the client's
// answers, the upstream's request state, and the client's _meta (Meta).
func SetParams(p *mcp.CallToolParams, r *Round) error {
	p.RequestState = r.State
	if err := json.Unmarshal(Meta(r.Meta, "", true, false), &p.Meta); err != nil || len(r.Responses) == 0 {
		return err
	}
	return json.Unmarshal(r.Responses, &p.InputResponses)
}

// MaxRounds bounds the rounds Legate fulfils for a client with a session,
// as the go-sdk client bounds its own.
const MaxRounds = 10

// Decode returns a result that asks for input (inputRequired says so)
// decoded from its JSON, of type input_required even when its JSON leaves
// the type out (AsksInput).
func Decode(raw json.RawMessage, inputRequired bool) (*mcp.CallToolResult, bool) {
	var top map[string]json.RawMessage
	if !inputRequired || json.Unmarshal(raw, &top) != nil {
		return nil, false
	}
	top["resultType"] = json.RawMessage(`"input_required"`)
	b, _ := json.Marshal(top)
	var res mcp.CallToolResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, false
	}
	return &res, true
}

// SessionMeta is the protocol _meta of a request Legate sends as protocol
// 2026-07-28 for a client with a session, ss (nil for the CLI): Legate names
// itself, and the capabilities are the client's, which Fulfil asks.
func SessionMeta(ss *mcp.ServerSession) json.RawMessage {
	caps := &mcp.ClientCapabilities{}
	if ss != nil {
		if p := ss.InitializeParams(); p != nil && p.Capabilities != nil {
			caps = p.Capabilities
		}
	}
	b, _ := json.Marshal(map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientInfo:         &mcp.Implementation{Name: "legate", Version: "1"},
		mcp.MetaKeyClientCapabilities: caps,
	})
	return b
}

// AskSession asks the client of ss, which has a session, for the input ir
// requests.
func AskSession(ctx context.Context, ss *mcp.ServerSession, ir mcp.InputRequest) (mcp.Result, error) {
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		return Elicit(ctx, ss, p)
	case *mcp.CreateMessageParams:
		return ss.CreateMessage(ctx, p)
	case *mcp.CreateMessageWithToolsParams:
		return ss.CreateMessageWithTools(ctx, p)
	case *mcp.ListRootsParams:
		return ss.ListRoots(ctx, p)
	}
	return nil, fmt.Errorf("unknown input request %T", ir)
}
