package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The clients of TestScaleOutBehindHAProxy and what each of their writes came to.

// scaleClient is one MCP client connected through HAProxy: stateless (protocol 2026-07-28, every
// request stands alone and HAProxy spreads them over the replicas) or stateful (2025-11-25, a
// session HAProxy keeps on the replica that opened it).
type scaleClient struct {
	lb       string // HAProxy's /mcp
	stateful bool
	name     string

	mu       sync.Mutex
	cs       *mcp.ClientSession   // the session calls use now
	sessions []*mcp.ClientSession // every session opened, closed at the end
	renewed  int                  // sessions opened after the first
}

func connectScaleClient(ctx context.Context, lb string, stateful bool, name string) (*scaleClient, error) {
	c := &scaleClient{lb: lb, stateful: stateful, name: name}
	cs, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.cs, c.sessions = cs, []*mcp.ClientSession{cs}
	return c, nil
}

func (c *scaleClient) connect(ctx context.Context) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: c.name, Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	want := "2026-07-28"
	if c.stateful {
		want = "2025-11-25"
		opts = &mcp.ClientSessionOptions{ProtocolVersion: want}
	}
	// The default client has no timeout, as a call waiting for approval needs.
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.lb, HTTPClient: &http.Client{}}, opts)
	if err != nil {
		return nil, err
	}
	if v := cs.InitializeResult().ProtocolVersion; v != want {
		cs.Close()
		return nil, fmt.Errorf("%s negotiated %s, want %s", c.name, v, want)
	}
	if c.stateful && cs.ID() == "" {
		cs.Close()
		return nil, fmt.Errorf("%s: a 2025-11-25 session without an Mcp-Session-Id", c.name)
	}
	return cs, nil
}

func (c *scaleClient) session() *mcp.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cs
}

// recover is what the client does after a request on session cs got err. Stateless, it opens
// a new session (the servers keep nothing of the old one, and a transport error may have broken
// it); the old one keeps its calls in flight. Stateful, it pings the session until it answers
// (it lives: go on with it) or is reported missing (mcp.ErrSessionMissing, HTTP 404 for its
// Mcp-Session-Id), and then opens a new session; expired tells which.
func (c *scaleClient) recover(ctx context.Context, cs *mcp.ClientSession, err error) (expired bool, _ error) {
	if c.stateful {
		for try := 0; !errors.Is(err, mcp.ErrSessionMissing); try++ {
			if try == 50 {
				return false, fmt.Errorf("session %s neither answers nor is reported missing: %w", cs.ID(), err)
			}
			if try > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			if err = cs.Ping(ctx, nil); err == nil {
				return false, nil
			}
		}
		expired = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs != cs {
		return expired, nil // renewed by another call
	}
	var next *mcp.ClientSession
	for range maxCallAttempts { // connecting as the replica dies may fail too
		if next, err = c.connect(ctx); err == nil {
			break
		}
	}
	if err != nil {
		return expired, err
	}
	c.cs, c.sessions = next, append(c.sessions, next)
	c.renewed++
	return expired, nil
}

func (c *scaleClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cs := range c.sessions {
		cs.Close()
	}
}

// scaleWrite is what one write of the run came to.
type scaleWrite struct {
	n          int
	client     *scaleClient
	approvalID string
	// kind is the final outcome: "delivered", "denied" or "interrupted" (its replica died while it
	// ran; failed, never run again); "" if the write never came to one.
	kind string
	// pendingReturned: a call returned APPROVAL_PENDING, the outcome then came through
	// legate.approval_status.
	pendingReturned bool
	// errs are the errors the client's calls got (not the results: JSON-RPC and transport
	// errors), each followed by the same call again (stateless) or on a new session (stateful).
	errs []error
	// sessionExpired: one of the stateful client's errors, or the ping after it, was
	// mcp.ErrSessionMissing (HTTP 404 for its Mcp-Session-Id).
	sessionExpired bool
	problem        string        // why the write is wrong, if it is
	took           time.Duration // from the first call to the outcome
}

// maxCallAttempts bounds the calls one write makes: the first and those after an error.
const maxCallAttempts = 4

// write calls hooks__send with {n, mark} until it has a result, then follows an APPROVAL_PENDING
// through legate.approval_status until the request is settled. pending is called when a call
// returns APPROVAL_PENDING for approval id.
//
// After an error (the replica holding the call died) the same call is made again. That is safe
// here, and only because the write needs approval: the request is bound to the principal, the
// tool, the arguments' hash and the tool's definition, so the same call finds the request the
// first one opened (waiting for its decision, or returning its stored outcome), even while the
// first is still being taken on another replica (finding and opening are one step in the store),
// and cannot open a second, nor run the write again. A write that needs no approval must not be
// sent again blindly: it may have run.
func (c *scaleClient) write(ctx context.Context, n int, mark string, pending func(id string)) *scaleWrite {
	w := &scaleWrite{n: n, client: c}
	defer func(start time.Time) { w.took = time.Since(start) }(time.Now())
	params := &mcp.CallToolParams{Name: "hooks__send", Arguments: map[string]any{"payload": map[string]any{"n": n, "mark": mark}}}
	var res *callResult
	for attempt := 1; res == nil; attempt++ {
		cs := c.session()
		r, err := cs.CallTool(ctx, params)
		if err == nil {
			res = asCallResult(r)
			break
		}
		if ctx.Err() != nil {
			w.problem = fmt.Sprintf("gave up: %v", errors.Join(append(w.errs, err)...))
			return w
		}
		w.errs = append(w.errs, err)
		if attempt == maxCallAttempts {
			w.problem = fmt.Sprintf("%d calls, each an error: %v", attempt, errors.Join(w.errs...))
			return w
		}
		expired, rerr := c.recover(ctx, cs, err)
		w.sessionExpired = w.sessionExpired || expired
		if rerr != nil {
			w.problem = fmt.Sprintf("after %v: %v", err, rerr)
			return w
		}
	}
	for {
		code, id, _ := gatewayCode(res)
		if id != "" {
			w.approvalID = id
		}
		switch code {
		case "":
			w.kind = "delivered"
			d, _ := res.StructuredContent["delivery_id"].(string)
			if d == "" || (w.approvalID != "" && d != w.approvalID) {
				w.problem = fmt.Sprintf("delivered with delivery id %q, want the approval id %q: %+v", d, w.approvalID, res)
			}
			w.approvalID = d
			return w
		case "APPROVAL_DENIED":
			w.kind = "denied"
			return w
		case "TRANSIENT":
			if _, _, msg := gatewayCode(res); strings.Contains(msg, "not run again") {
				w.kind = "interrupted"
				return w
			}
		case "APPROVAL_PENDING":
			w.pendingReturned = true
			pending(id)
			res = c.awaitOutcome(ctx, w)
			if res != nil {
				continue
			}
			return w
		}
		w.problem = fmt.Sprintf("unexpected result %+v", res)
		return w
	}
}

// awaitOutcome reads legate.approval_status for w's request until it is settled, and returns its
// outcome as the call's result (a denial as APPROVAL_DENIED); nil with w.problem set if it cannot.
func (c *scaleClient) awaitOutcome(ctx context.Context, w *scaleWrite) *callResult {
	for errs := 0; ; {
		cs := c.session()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "legate__approval_status", Arguments: map[string]any{"approval_id": w.approvalID}})
		if err != nil { // a read: asking again is always safe
			if errs++; errs == maxCallAttempts || ctx.Err() != nil {
				w.problem = fmt.Sprintf("legate.approval_status %s: %v", w.approvalID, err)
				return nil
			}
			w.errs = append(w.errs, err)
			expired, rerr := c.recover(ctx, cs, err)
			w.sessionExpired = w.sessionExpired || expired
			if rerr != nil {
				w.problem = rerr.Error()
				return nil
			}
			continue
		}
		st := asCallResult(r)
		state, _ := st.StructuredContent["state"].(string)
		switch state {
		case "executed", "failed":
			var out callResult
			raw, _ := json.Marshal(st.StructuredContent["outcome"])
			if err := json.Unmarshal(raw, &out); err != nil {
				w.problem = fmt.Sprintf("legate.approval_status %s: outcome %s: %v", w.approvalID, raw, err)
				return nil
			}
			return &out
		case "denied":
			return &callResult{IsError: true, StructuredContent: map[string]any{"error": map[string]any{"code": "APPROVAL_DENIED", "approval_id": w.approvalID}}}
		case "pending", "approved", "executing":
		default:
			w.problem = fmt.Sprintf("legate.approval_status %s: %+v", w.approvalID, st)
			return nil
		}
		select {
		case <-ctx.Done():
			w.problem = fmt.Sprintf("legate.approval_status %s: still %s", w.approvalID, state)
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func asCallResult(r *mcp.CallToolResult) *callResult {
	raw, _ := json.Marshal(r)
	var out callResult
	_ = json.Unmarshal(raw, &out)
	return &out
}

// gatewayCode returns the code, approval id and message of a gateway error result ("" for
// a result that is not one).
func gatewayCode(r *callResult) (code, approvalID, message string) {
	if !r.IsError {
		return "", "", ""
	}
	e, _ := r.StructuredContent["error"].(map[string]any)
	if e == nil { // a tool with an output schema has them in _meta
		e, _ = r.Meta["io.legate/error"].(map[string]any)
	}
	code, _ = e["code"].(string)
	approvalID, _ = e["approval_id"].(string)
	message, _ = e["message"].(string)
	if code == "" {
		code = "ERROR"
	}
	return code, approvalID, message
}

// approvalRequested matches the approval id of a replica's "approval requested" log line.
var approvalRequested = regexp.MustCompile(`approval requested.*?(ap_[0-9a-f]+)`)

// originOf returns which replica logged "approval requested" for each approval id: the replica
// that took the call which opened it.
func originOf(replicas []*killable) map[string]int {
	out := map[string]int{}
	for i, k := range replicas {
		for _, m := range approvalRequested.FindAllStringSubmatch(k.output.String(), -1) {
			out[m[1]] = i
		}
	}
	return out
}

// sessionsOf returns the ids of the live MCP sessions of a replica (GET /admin/v1/sessions).
func sessionsOf(t *testing.T, k *killable, admin string) map[string]bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(k.url, "/mcp")+"/admin/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/v1/sessions: %s %v", resp.Status, err)
	}
	out := map[string]bool{}
	for _, s := range body.Sessions {
		out[s.ID] = true
	}
	return out
}
