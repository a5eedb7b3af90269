package connections_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/sources"
)

// TestAutoAuthAnswers: what a call that is not connected answers a
// 2026-07-28 client, by round, and who is never asked.
func TestAutoAuthAnswers(t *testing.T) {
	e := newEnv(t)
	key := make([]byte, 32)
	m := connections.New(connections.Options{Vault: e.vault, Instances: func() []sources.InstanceDef { return []sources.InstanceDef{e.def} },
		Key: func(context.Context) []byte { return key }, Resource: "https://legate.example/mcp"})
	caller := connectors.Caller{Principal: "alice", Tenant: "acme"}
	notConnected := m.NotConnected("slack", "alice", "has not connected it")
	urlCaps, _ := json.Marshal(map[string]any{mcp.MetaKeyClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}})
	formCaps, _ := json.Marshal(map[string]any{mcp.MetaKeyClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}})
	ctx := context.Background()

	// First round, a client that can open a URL: input_required with the
	// connect URL.
	again, res, err := m.AutoAuth(ctx, notConnected, "slack", caller, connections.Asker{Round: &rounds.Round{Meta: urlCaps}})
	if again || err != nil || res == nil || !res.NeedsInput() {
		t.Fatalf("first round: %v %+v %v", again, res, err)
	}
	ask, ok := res.InputRequests[connections.AskKey].(*mcp.ElicitParams)
	if !ok || ask.Mode != "url" || ask.URL != "https://legate.example/connect/slack" || ask.ElicitationID == "" {
		t.Fatalf("input requests: %+v", res.InputRequests)
	}

	// Nobody to ask, or not a connection's error: the error as it is.
	for name, c := range map[string]struct {
		err error
		a   connections.Asker
	}{
		"form only":        {notConnected, connections.Asker{Round: &rounds.Round{Meta: formCaps}}},
		"no capabilities":  {notConnected, connections.Asker{Round: &rounds.Round{Meta: json.RawMessage(`{}`)}}},
		"no client":        {notConnected, connections.Asker{}},
		"another failure":  {legate.Errorf(legate.CodeTransient, "slack is down"), connections.Asker{Round: &rounds.Round{Meta: urlCaps}}},
		"another's answer": {notConnected, connections.Asker{Round: &rounds.Round{Meta: urlCaps, Responses: json.RawMessage(`{"other":{"action":"accept"}}`)}}},
	} {
		if again, res, err := m.AutoAuth(ctx, c.err, "slack", caller, c.a); again || res != nil || !errors.Is(err, c.err) && err != c.err {
			t.Errorf("%s: %v %+v %v", name, again, res, err)
		}
	}

	// The retry: declined, it says so; accepted but never connected, the
	// call gives up when its time ends.
	retry := func(action string) *rounds.Round {
		return &rounds.Round{Meta: urlCaps, Responses: json.RawMessage(`{"` + connections.AskKey + `":{"action":"` + action + `"}}`)}
	}
	if again, res, err := m.AutoAuth(ctx, notConnected, "slack", caller, connections.Asker{Round: retry("decline")}); again || res != nil ||
		legate.CodeOf(err) != legate.CodeNotConnected || !strings.Contains(err.Error(), "did not connect") || !strings.Contains(err.Error(), "https://legate.example/connect/slack") {
		t.Fatalf("declined: %v %+v %v", again, res, err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if again, res, err := m.AutoAuth(short, notConnected, "slack", caller, connections.Asker{Round: retry("accept")}); again || res != nil ||
		legate.CodeOf(err) != legate.CodeNotConnected || !strings.Contains(err.Error(), "was not connected within") {
		t.Fatalf("accepted, never connected: %v %+v %v", again, res, err)
	}
}

// TestForSource: the retry of a call Legate asked to connect carries the
// answer to Legate's request, which the call's source never sees; its
// other answers it does.
func TestForSource(t *testing.T) {
	meta := json.RawMessage(`{"k":1}`)
	for name, c := range map[string]struct {
		in   *rounds.Round
		want string // the responses the source sees
	}{
		"first round":      {&rounds.Round{Meta: meta}, ""},
		"legate's answer":  {&rounds.Round{Meta: meta, Responses: json.RawMessage(`{"` + connections.AskKey + `":{"action":"accept"}}`)}, ""},
		"both answers":     {&rounds.Round{Meta: meta, Responses: json.RawMessage(`{"` + connections.AskKey + `":{"action":"accept"},"up":{"action":"decline"}}`)}, `{"up":{"action":"decline"}}`},
		"the source's own": {&rounds.Round{Meta: meta, State: "s", Responses: json.RawMessage(`{"up":{"action":"accept"}}`)}, `{"up":{"action":"accept"}}`},
	} {
		got := connections.ForSource(c.in)
		if string(got.Responses) != c.want || string(got.Meta) != string(meta) || got.State != c.in.State {
			t.Errorf("%s: %+v, want responses %s", name, got, c.want)
		}
		if name == "the source's own" && got != c.in {
			t.Errorf("%s: a round without Legate's answer is not the same round", name)
		}
	}
	if connections.ForSource(nil) != nil {
		t.Error("no round became one")
	}
}
