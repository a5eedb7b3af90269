package rounds_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/legate-mcp/legate/rounds"
)

// askTwice is a call that asks for input twice, one request at a time, and
// returns both answers.
func askTwice(ctx context.Context, ask func(context.Context, mcp.InputRequest) (json.RawMessage, error)) (any, error) {
	var got string
	for _, q := range []string{"first?", "second?"} {
		raw, err := ask(ctx, &mcp.ElicitParams{Message: q})
		if err != nil {
			return nil, err
		}
		var r mcp.ElicitResult
		json.Unmarshal(raw, &r)
		got += r.Content["v"].(string)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: got}}}, nil
}

// A held call is asked round by round, each answer reaching the request it
// answers, until its result.
func TestHeldCallRounds(t *testing.T) {
	ctx := context.Background()
	h := rounds.NewHolder(4, time.Minute, nil)
	c := h.Start(askTwice)
	state := ""
	for i, v := range []string{"a", "b"} {
		res, err := wait(ctx, c)
		if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
			t.Fatalf("round %d: %+v, %v; want one input request", i+1, res, err)
		}
		state = res.RequestState
		resumed, ok, err := h.Resume(state)
		if !ok || err != nil || resumed != c {
			t.Fatalf("round %d: Resume(%q) = %v, %v, %v", i+1, state, resumed, ok, err)
		}
		answers := map[string]any{}
		for key := range res.InputRequests {
			answers[key] = mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": v}}
		}
		b, _ := json.Marshal(answers)
		c.Answer(b)
	}
	res, err := wait(ctx, c)
	if err != nil || res.NeedsInput() || res.Content[0].(*mcp.TextContent).Text != "ab" {
		t.Fatalf("end: %+v, %v; want ab", res, err)
	}
	if _, ok, err := h.Resume(state); !ok || !errors.Is(err, rounds.ErrState) {
		t.Errorf("Resume after the end: %v, %v; want ErrState", ok, err)
	}
	if _, ok, _ := h.Resume("upstream's own"); ok {
		t.Error("a state that is not a held call's names one")
	}
}

// Requests a call sends at once, as go-sdk's server asks a client of an
// earlier protocol for every input a multi-round result requests, reach
// the client in one round, and each answer the request it answers.
func TestHeldCallGathers(t *testing.T) {
	ctx := context.Background()
	h := rounds.NewHolder(4, time.Minute, nil)
	c := h.Start(func(ctx context.Context, ask func(context.Context, mcp.InputRequest) (json.RawMessage, error)) (any, error) {
		g, ctx := errgroup.WithContext(ctx)
		got := make([]string, 3)
		for i, q := range []string{"a", "b", "c"} {
			g.Go(func() error {
				raw, err := ask(ctx, &mcp.ElicitParams{Message: q})
				var r mcp.ElicitResult
				json.Unmarshal(raw, &r)
				got[i], _ = r.Content["v"].(string)
				return err
			})
		}
		err := g.Wait()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(got, "")}}}, err
	})
	res, err := wait(ctx, c)
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 3 {
		t.Fatalf("first round: %+v, %v; want the three requests in one round", res, err)
	}
	answers := map[string]any{}
	for key, ir := range res.InputRequests {
		answers[key] = mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": ir.(*mcp.ElicitParams).Message + "!"}}
	}
	b, _ := json.Marshal(answers)
	c.Answer(b)
	if res, err = wait(ctx, c); err != nil || res.NeedsInput() || res.Content[0].(*mcp.TextContent).Text != "a!b!c!" {
		t.Fatalf("end: %+v, %v; want each answer where it was asked", res, err)
	}
}

// A held call no retry reaches within the time-to-live is ended: the
// upstream's request fails and the call with it. A holder holds at most its
// bound.
func TestHeldCallBounds(t *testing.T) {
	ctx := context.Background()
	h := rounds.NewHolder(1, time.Millisecond, nil)
	c := h.Start(askTwice)
	res, err := wait(ctx, c)
	if err != nil || !res.NeedsInput() {
		t.Fatalf("first round: %+v, %v", res, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, _, err := h.Resume(res.RequestState); err != nil {
			break // expired
		}
		if time.Now().After(deadline) {
			t.Fatal("the held call never expired")
		}
	}
	if r, err := c.Wait(ctx); err == nil {
		b, _ := json.Marshal(r)
		t.Fatalf("a call whose client never answered did not fail: %s (first: %+v)", b, res)
	}

	h = rounds.NewHolder(1, time.Minute, nil)
	if res, err := wait(ctx, h.Start(askTwice)); err != nil || !res.NeedsInput() {
		t.Fatalf("the first call: %+v, %v", res, err)
	}
	if _, err := h.Start(askTwice).Wait(ctx); !errors.Is(err, rounds.ErrHeldFull) {
		t.Fatalf("a call past the bound: %v, want ErrHeldFull", err)
	}
}

// wait is c.Wait, whose result is a tool's.
func wait(ctx context.Context, c *rounds.Held) (*mcp.CallToolResult, error) {
	v, err := c.Wait(ctx)
	res, _ := v.(*mcp.CallToolResult)
	if err == nil && res == nil {
		return nil, errors.New("no result")
	}
	return res, err
}
