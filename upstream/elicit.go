package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk checks an elicitation's requested schema against its own
// reading of the spec, on both sides: the client refuses some requests
// before its handler runs (titled multi-select enums, for one), and the
// server checks the user's answer after the client sent it. A relay must
// pass the request and the answer through as they are, so:
//   - relayElicitation, a receiving middleware on each upstream client,
//     hands elicitation/create to the relay before the SDK's check;
//   - CaptureElicitResult, a sending middleware the gateway installs on its
//     server, keeps the client's answer, which the relay returns even when
//     the SDK's check of it fails.

type elicitSlotKey struct{}

type elicitSlot struct{ res *mcp.ElicitResult }

// CaptureElicitResult records the answer to an elicitation/create sent
// with a context from relayElicit.
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

// relayElicit asks owner, returning the client's own answer.
func relayElicit(ctx context.Context, owner *mcp.ServerSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	slot := &elicitSlot{}
	res, err := owner.Elicit(context.WithValue(ctx, elicitSlotKey{}, slot), p)
	if err != nil && slot.res != nil {
		return slot.res, nil
	}
	return res, err
}

// relayElicitation answers elicitation/create through the relay without
// the client SDK's schema check.
func (s *session) relayElicitation(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ElicitRequest); ok && s.owner != nil {
			return relayElicit(s.callContext(ctx), s.owner, r.Params)
		}
		return next(ctx, method, req)
	}
}
