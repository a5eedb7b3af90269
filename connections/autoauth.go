package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/rounds"
)

// auto_auth: a call to an instance, or to a tool of an OAuth-protected
// upstream (auth: oauth), that its caller has not connected (or whose
// connection expired) asks the caller's user to connect it, and only such
// a call does: no flow starts on its own, and Legate opens nothing; the
// user opens the connect URL, which is Legate's own /connect/ID (signed
// in as the caller), whose page says who is being connected and starts
// the consent only when the user continues, or not.
//
//   - A client with a session (protocol 2025-11-25) that declared URL-mode
//     elicitation is sent elicitation/create in URL mode with the connect
//     URL. Once the user accepts, the call waits (within its timeout) until
//     the connection exists, then runs again with the new credential.
//   - A 2026-07-28 client that declared it gets an input_required result
//     carrying the same request; its retry, answered accept, waits and runs
//     again the same way.
//   - Any other gets NOT_CONNECTED, naming the connect URL and what to do.

// AskKey is the key of the connect request in an input_required result's
// inputRequests.
const AskKey = "legate_connect"

// waitEvery is how often a call waiting for a connection looks again.
const waitEvery = 250 * time.Millisecond

// Asker is how a call can reach its user: a client with a session, or a
// 2026-07-28 client's round (nil when neither).
type Asker struct {
	Session *mcp.ServerSession
	Round   *rounds.Round
}

// canAskURL reports whether caps declare URL-mode elicitation.
func canAskURL(caps *mcp.ClientCapabilities) bool {
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// roundCaps are the capabilities a 2026-07-28 client sent in its _meta.
func roundCaps(r *rounds.Round) *mcp.ClientCapabilities {
	var meta struct {
		Caps *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	json.Unmarshal(r.Meta, &meta)
	return meta.Caps
}

// sessionAsks reports whether a's client has a session that can be asked
// to open a URL.
func (a Asker) sessionAsks() bool {
	if a.Session == nil {
		return false
	}
	p := a.Session.InitializeParams()
	return p != nil && canAskURL(p.Capabilities)
}

// MayAsk reports whether a call from a's client to a source that acts as
// each caller (perCaller: a connector instance with per_user or
// per_user_or_shared credentials, or an upstream with auth: oauth) may
// ask its user to connect: the client has a session and declared URL-mode
// elicitation. The HTTP fast path, which cannot ask a client mid-call,
// leaves such calls to the SDK: whether the caller's connection is live is
// known only once the provider has accepted or refused its token.
func MayAsk(perCaller bool, a Asker) bool {
	return perCaller && a.sessionAsks()
}

// ForSource is round r as the source of the call sees it: without the
// answer to Legate's own request to connect (AskKey), which only the
// retry of a call that asked carries.
func ForSource(r *rounds.Round) *rounds.Round {
	if r == nil || len(r.Responses) == 0 {
		return r
	}
	var answers map[string]json.RawMessage
	if json.Unmarshal(r.Responses, &answers) != nil {
		return r
	}
	if _, ok := answers[AskKey]; !ok {
		return r
	}
	delete(answers, AskKey)
	out := *r
	out.Responses = nil
	if len(answers) > 0 {
		out.Responses, _ = json.Marshal(answers)
	}
	return &out
}

// AutoAuth handles a call by caller to instance (a connector instance's
// id, or an OAuth-protected upstream's) that failed with err. When
// err is NOT_CONNECTED and a's client can open a URL, it asks the user to
// connect: again reports that the connection now exists and the call is
// to run again; a non-nil res is the input_required result to answer a
// 2026-07-28 client with. Otherwise it returns the error to answer, err
// itself when nobody can be asked.
func (m *Manager) AutoAuth(ctx context.Context, err error, instance string, caller connectors.Caller, a Asker) (again bool, res *mcp.CallToolResult, out error) {
	u := m.ConnectURL(instance, "")
	if legate.CodeOf(err) != legate.CodeNotConnected || u == "" {
		return false, nil, err
	}
	ask := &mcp.ElicitParams{Mode: "url", URL: u, ElicitationID: uuid.NewString(),
		Message: fmt.Sprintf("%s acts as you and you have not connected it (or your connection expired). Open this link to connect your account; the call goes on once you have.", instance)}
	declined := func(action string) error {
		return reworded(err, fmt.Sprintf("the user did not connect %s (answered %s): connect it by opening %s, then call again", instance, action, u))
	}
	switch {
	case a.sessionAsks():
		m.opts.Logger.Info("asking the client to connect", "instance", instance, "principal", caller.Principal, "tenant", caller.Tenant)
		er, eerr := rounds.Elicit(ctx, a.Session, ask)
		if eerr != nil {
			m.opts.Logger.Info("asking the client to connect failed", "instance", instance, "principal", caller.Principal, "error", eerr)
			return false, nil, err
		}
		if er.Action != "accept" {
			return false, nil, declined(er.Action)
		}
	case a.Round != nil && len(a.Round.Responses) == 0 && canAskURL(roundCaps(a.Round)):
		b, _ := json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": mcp.InputRequestMap{AskKey: ask}})
		res, _ := rounds.Decode(b, true)
		return false, res, nil
	case a.Round != nil && len(a.Round.Responses) > 0:
		var answers map[string]mcp.ElicitResult
		json.Unmarshal(a.Round.Responses, &answers)
		er, ok := answers[AskKey]
		if !ok {
			return false, nil, err
		}
		if er.Action != "accept" {
			return false, nil, declined(er.Action)
		}
	default:
		return false, nil, err
	}
	// Any live connection now is new: the call just found none.
	if _, werr := m.Wait(ctx, caller.Tenant, caller.Principal, instance, time.Time{}, waitEvery); werr != nil {
		return false, nil, reworded(err, fmt.Sprintf("%s was not connected within this call's time (%v): connect it by opening %s, then call again", instance, werr, u))
	}
	if a.Session != nil {
		a.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: ask.ElicitationID})
	}
	m.opts.Logger.Info("connected during a call; running it again", "instance", instance, "principal", caller.Principal)
	return true, nil, nil
}

// reworded is err, NOT_CONNECTED, with msg as its message.
func reworded(err error, msg string) error {
	var le *legate.Error
	if !errors.As(err, &le) {
		return err
	}
	out := *le
	out.Message = msg
	return &out
}
