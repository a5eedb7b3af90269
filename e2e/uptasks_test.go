package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamTaskOnlyTool: server-everything's simulate-research-query runs only as a task
// (execution.taskSupport "required", the 2025-11-25 tasks). Through Legate, a client of
// protocol 2025-11-25 that knows nothing of tasks calls it as any other tool, over a stdio and
// a Streamable HTTP upstream: Legate creates the task on the upstream, relays its status
// messages as progress, answers with its report, and asks the client the upstream's own
// question (elicitation) for an ambiguous query; a call the client cancels cancels the
// upstream's task, which the upstream confirms (seen through a recording proxy in front of
// the HTTP one).
func TestUpstreamTaskOnlyTool(t *testing.T) {
	p := need(t)
	t.Parallel()
	rec := &recorder{}
	proxy := rec.proxy(t, p.everythingHTTP(t))
	config := upstreamConfig(t, fmt.Sprintf("upstreams:\n  - id: evs\n    command: %s\n  - id: evh\n    url: %s\n  - id: evp\n    url: %s\n    session: per_client\n",
		yamlList(p.node, p.everything, "stdio"), proxy+"/mcp", proxy+"/mcp"))
	// No refresh before serve: the server lists both itself, and holds the
	// first tools/list until it has (what tells it which tools are tasks).
	s := serveState(t, config, "")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var progress []string
	var onProgress func()
	asked := 0
	client := mcp.NewClient(&mcp.Implementation{Name: "uptasks-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, r.Params.Message)
			if onProgress != nil {
				onProgress()
			}
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked++
			mu.Unlock()
			if !strings.Contains(r.Params.Message, "could have multiple interpretations") {
				t.Errorf("elicitation %q, want the upstream's clarification", r.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "snake"}}, nil
		},
	})
	// The client's HTTP answers are kept, to see the listing as Legate writes it.
	answers := &lockedBuffer{mu: &sync.Mutex{}, b: &bytes.Buffer{}}
	hc := &http.Client{Transport: teeTransport{copy: answers}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = tool
	}

	// Legate runs the task itself: clients are to call the tool plainly, so it is listed
	// without the upstream's execution.taskSupport.
	answers.mu.Lock()
	wire := answers.b.String()
	answers.mu.Unlock()
	if !strings.Contains(wire, `"name":"mcp__evs__simulate-research-query"`) || strings.Contains(wire, "taskSupport") {
		t.Errorf("the listing names the tool with a task support, or not at all:\n%.2000s", wire)
	}

	for _, id := range []string{"evs", "evh", "evp"} {
		name := "mcp__" + id + "__simulate-research-query"
		t.Run(id, func(t *testing.T) {
			if listed[name] == nil {
				t.Fatalf("%s not listed", name)
			}
			mu.Lock()
			progress = nil
			mu.Unlock()
			topic := "tides-" + nonce()
			call := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"topic": topic}}
			call.SetProgressToken("research-" + id)
			res, err := cs.CallTool(ctx, call)
			if err != nil || res.IsError {
				t.Fatalf("%s: %+v, %v", name, res, err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "# Research Report: "+topic) {
				t.Fatalf("result %q, want the report on %s", text, topic)
			}
			// The client runs its notification handler apart from the call's
			// answer: give the last one a moment to arrive.
			want := []string{"Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				mu.Lock()
				n := len(progress)
				mu.Unlock()
				if n >= len(want) {
					break
				}
			}
			mu.Lock()
			got := strings.Join(progress, "|")
			mu.Unlock()
			// Polled at the upstream's interval, a stage as short as the
			// interval can pass unseen on a loaded machine: at least two of
			// the task's status messages, each one of them.
			seen := 0
			for _, w := range want {
				if strings.Contains(got, w) {
					seen++
				}
			}
			if seen < 2 {
				t.Errorf("progress %q, want at least two of %q (the task's status messages)", got, want)
			}
		})

		t.Run(id+"/input", func(t *testing.T) {
			mu.Lock()
			before := asked
			mu.Unlock()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"topic": "python", "ambiguous": true}})
			if err != nil || res.IsError {
				t.Fatalf("%s: %+v, %v", name, res, err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "python (snake)") {
				t.Errorf("result %q, want the report on the interpretation the client chose", text)
			}
			mu.Lock()
			defer mu.Unlock()
			if asked != before+1 {
				t.Errorf("the client was asked %d times, want once", asked-before)
			}
		})
	}

	// A client of protocol 2026-07-28 (the go-sdk client's default, stateless) answers the
	// upstream's question by retrying (input_required), which its SDK does on its own.
	t.Run("stateless", func(t *testing.T) {
		era, err := mcp.NewClient(&mcp.Implementation{Name: "uptasks-era", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "comedy"}}, nil
			},
		}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer era.Close()
		if v := era.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("negotiated %q, want 2026-07-28", v)
		}
		for _, id := range []string{"evs", "evh"} {
			res, err := era.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + id + "__simulate-research-query", Arguments: map[string]any{"topic": "python", "ambiguous": true}})
			if err != nil || res.IsError {
				t.Fatalf("%s: %+v, %v", id, res, err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "python (comedy)") {
				t.Errorf("%s: result %q, want the report on the interpretation the client chose", id, text)
			}
		}
	})

	t.Run("cancel", func(t *testing.T) {
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		mu.Lock()
		onProgress = stop // at the task's first status, the client gives up
		mu.Unlock()
		defer func() {
			mu.Lock()
			onProgress = nil
			mu.Unlock()
		}()
		call := &mcp.CallToolParams{Name: "mcp__evh__simulate-research-query", Arguments: map[string]any{"topic": "cancelled-" + nonce()}}
		call.SetProgressToken("research-cancel")
		if _, err := cs.CallTool(cctx, call); err == nil {
			t.Fatal("the cancelled call answered")
		}
		// The upstream answers Legate's tasks/cancel with the task, now cancelled.
		var seen string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if seen = rec.answerTo("tasks/cancel"); strings.Contains(seen, `"status":"cancelled"`) {
				return
			}
		}
		t.Fatalf("the upstream's answer to tasks/cancel: %q, want the task cancelled", seen)
	})
}

// recorder is a reverse proxy in front of an upstream that keeps the answers to the requests
// whose body names a method.
type recorder struct {
	mu      sync.Mutex
	answers map[string]*bytes.Buffer // method → its answers' bodies
}

func (r *recorder) proxy(t *testing.T, up *daemon) string {
	target, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", up.port))
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1 // event streams as they come
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		for _, method := range []string{"tasks/cancel"} {
			if bytes.Contains(body, []byte(`"method":"`+method+`"`)) {
				w = &teeWriter{ResponseWriter: w, copy: r.buffer(method)}
			}
		}
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (r *recorder) buffer(method string) *lockedBuffer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answers == nil {
		r.answers = map[string]*bytes.Buffer{}
	}
	if r.answers[method] == nil {
		r.answers[method] = &bytes.Buffer{}
	}
	return &lockedBuffer{mu: &r.mu, b: r.answers[method]}
}

func (r *recorder) answerTo(method string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.answers[method]; b != nil {
		return b.String()
	}
	return ""
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// teeTransport copies the bodies of the answers it receives to copy.
type teeTransport struct{ copy io.Writer }

func (t teeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(resp.Body, t.copy), resp.Body}
	}
	return resp, err
}
