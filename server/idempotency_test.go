package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/server"
)

// onceProvider is a provider that keeps posts and does no deduplication of
// its own; the first post of a text starting with "hang" is kept, and its
// answer is lost: it waits for the caller to give up.
type onceProvider struct {
	mu    sync.Mutex
	posts []string
}

type onePost struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

func (p *onceProvider) count(text string) (n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.posts {
		if s == text {
			n++
		}
	}
	return n
}

var theOnceProvider = &onceProvider{}

// onceConn's one write, post, runs through saas.WriteOnce with markers
// off: Find matches the text.
type onceConn struct{ kit *saas.Kit }

func (onceConn) Validate() error                                    { return nil }
func (onceConn) Test(context.Context, connectors.Credentials) error { return nil }
func (c onceConn) Tools() []connectors.Tool {
	p := theOnceProvider
	return []connectors.Tool{connectors.Returning[onePost](connectors.NewTool("post", "Post a text. "+saas.OnceNote, legate.ClassWrite,
		func(ctx context.Context, call *connectors.Call, in *struct {
			Text string `json:"text"`
		}) (*legate.Result, error) {
			out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[onePost]{
				Send: func(ctx context.Context, _, _ string) (*onePost, error) {
					p.mu.Lock()
					first := !slices.Contains(p.posts, in.Text)
					p.posts = append(p.posts, in.Text)
					post := &onePost{ID: len(p.posts), Text: in.Text}
					p.mu.Unlock()
					if first && strings.HasPrefix(in.Text, "hang") {
						<-ctx.Done()
						return nil, ctx.Err()
					}
					return post, nil
				},
				Find: func(_ context.Context, _, _ string, _ time.Time) (*onePost, error) {
					p.mu.Lock()
					defer p.mu.Unlock()
					for i, s := range p.posts {
						if s == in.Text {
							return &onePost{ID: i + 1, Text: s}, nil
						}
					}
					return nil, nil
				},
			})
			if err != nil {
				return nil, err
			}
			return &legate.Result{Structured: out}, nil
		}))}
}

func init() {
	connectors.Register(connectors.Type{Name: "once-probe", Description: "test connector",
		Credentials: []connectors.Credential{{Name: "token"}},
		New: func(inst connectors.Instance) (connectors.Connector, error) {
			return onceConn{kit: saas.New(inst, saas.Options{Provider: "once", Credential: "token", MaxAttempts: 1})}, nil
		}})
}

const onceConfig = `
policy:
  defaults: {read: allow, write: allow}
connectors:
  - id: once
    type: once-probe
    credentials: {token: {env: LEGATE_TEST_KEY}}
`

// A client that re-sends a write after losing its answer — on a session,
// stateless, or through the SDK's path; with its own key in _meta, or the
// same call again within the repeat window — gets the first outcome, and
// the provider holds one write. A tenth of the first calls lose their
// answer at the provider too (the client gives up while it answers: once
// the provider has the post, however loaded the machine), so
// that the retry finds the write instead of replaying a recorded outcome.
// A thousand times.
func TestClientRetryOfAWriteWritesOnce(t *testing.T) {
	gw := newGateway(t, onceConfig)
	url := serve(t, gw)
	ctx := context.Background()
	sdk, err := server.SDKClient(ctx, gw)
	if err != nil {
		t.Fatal(err)
	}
	defer sdk.Close()
	doors := map[string]*mcp.ClientSession{"session": fastSession(t, url), "stateless": connect(t, url, "2026-07-28"), "sdk": sdk}
	names := []string{"session", "stateless", "sdk"}
	call := func(cs *mcp.ClientSession, cctx context.Context, text, key string) (*mcp.CallToolResult, error) {
		p := &mcp.CallToolParams{Name: "once__post", Arguments: map[string]any{"text": text}}
		if key != "" {
			p.Meta = mcp.Meta{legate.IdempotencyMetaKey: key}
		}
		return cs.CallTool(cctx, p)
	}
	const calls = 1000
	for i := range calls {
		door := names[i%3]
		cs := doors[door]
		key := ""
		if i%2 == 0 {
			key = fmt.Sprintf("client-key-%d", i)
		}
		text := fmt.Sprintf("post %d", i)
		if i%10 == 0 {
			// The client gives up once the provider has the post: the
			// answer is lost.
			text = fmt.Sprintf("hang %d", i)
			gave, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); call(cs, gave, text, key) }()
			for deadline := time.Now().Add(10 * time.Second); theOnceProvider.count(text) == 0; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s call %d: the post never reached the provider", door, i)
				}
			}
			cancel()
			<-done
		} else {
			call(cs, ctx, text, key) // answered, but the client never reads it
		}
		var res *mcp.CallToolResult
		// While the first call still runs (until its cancellation reaches
		// the provider, slower on a loaded machine), a retry is CONFLICT.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			res, err = call(cs, ctx, text, key)
			if err != nil || !res.IsError || !strings.Contains(metaError(res), "CONFLICT") || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || res.IsError {
			t.Fatalf("%s call %d (key %q): retry: %v %+v", door, i, key, err, res)
		}
		var got onePost
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &got)
		if n := theOnceProvider.count(text); n != 1 || got.Text != text {
			t.Fatalf("%s call %d (key %q): %d writes of %q, the retry got %+v; want 1 and it", door, i, key, n, text, got)
		}
	}
	// Another key, or another caller's same call, is another operation.
	if res, err := call(doors["stateless"], ctx, "post 1", "another-key"); err != nil || res.IsError || theOnceProvider.count("post 1") != 2 {
		t.Fatalf("another key: %v %+v, %d writes; want a second write", err, res, theOnceProvider.count("post 1"))
	}
}

// With repeat_window 0, only a client's key makes a repeat the same
// operation.
func TestRepeatWindowOff(t *testing.T) {
	gw := newGateway(t, "repeat_window: 0s\n"+onceConfig)
	ctx := context.Background()
	o := server.CallOptions{Caller: connectors.Caller{Principal: "p"}}
	for range 2 {
		if res, err := gw.Call(ctx, "once.post", json.RawMessage(`{"text":"off"}`), o); err != nil || res.IsError {
			t.Fatal(err, res)
		}
	}
	if n := theOnceProvider.count("off"); n != 2 {
		t.Fatalf("%d writes; want 2 with the window off", n)
	}
	o.IdempotencyKey = "k"
	for range 2 {
		if res, err := gw.Call(ctx, "once.post", json.RawMessage(`{"text":"keyed"}`), o); err != nil || res.IsError {
			t.Fatal(err, res)
		}
	}
	if n := theOnceProvider.count("keyed"); n != 1 {
		t.Fatalf("%d writes with one key; want 1", n)
	}
}

// metaError is an error result's details, from its _meta.
func metaError(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res.Meta[legate.ErrorMetaKey])
	return string(b)
}
