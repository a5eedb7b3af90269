package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientProtocol is the protocol version the load clients speak: the
// stateful 2025-11-25 that every go-sdk server and Legate's own upstream
// sessions use. (A go-sdk v1.8.0 client left to its default first probes
// 2026-07-28, which Legate would answer statelessly while a stateful
// upstream refuses it: the two sides would not be comparable.)
const clientProtocol = "2025-11-25"

// StatelessProtocol is the first protocol version without sessions.
const StatelessProtocol = "2026-07-28"

// NewHTTPClient is a client whose idle pool holds every connection the
// load needs, so that no call pays a TCP handshake.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     2 * time.Minute,
		DisableCompression:  true,
	}}
}

// OpenSessions opens n client sessions to endpoint, parallel at most par.
func OpenSessions(ctx context.Context, hc *http.Client, endpoint string, n, par int, standaloneSSE bool) ([]*mcp.ClientSession, error) {
	return OpenSessionsAt(ctx, hc, endpoint, n, par, standaloneSSE, clientProtocol)
}

// OpenSessionsAt is OpenSessions speaking protocol version.
func OpenSessionsAt(ctx context.Context, hc *http.Client, endpoint string, n, par int, standaloneSSE bool, version string) ([]*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "legate-bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	out := make([]*mcp.ClientSession, n)
	errs := make([]error, n)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i], errs[i] = c.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: !standaloneSSE,
			}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		CloseSessions(out)
		return nil, fmt.Errorf("opening %d sessions to %s: %w", n, endpoint, firstErr(errs))
	}
	return out, nil
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// CloseSessions closes every session of ss, 32 at a time.
func CloseSessions(ss []*mcp.ClientSession) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for _, s := range ss {
		if s != nil {
			sem <- struct{}{}
			wg.Go(func() { defer func() { <-sem }(); s.Close() })
		}
	}
	wg.Wait()
}

// CallFunc makes one call on a session.
type CallFunc func(ctx context.Context, cs *mcp.ClientSession) error

// ToolCall calls a tool and treats an isError result as a failure.
func ToolCall(name string, args map[string]any) CallFunc {
	return func(ctx context.Context, cs *mcp.ClientSession) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s: isError: %v", name, TextOf(res))
		}
		return nil
	}
}

// TextOf is the text of res's first text content.
func TextOf(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// LoadResult is one measurement window.
type LoadResult struct {
	Calls   int
	Elapsed time.Duration
	Lat     []time.Duration // sorted
	CPU     map[string]float64
	Up      Stats // requests and connections the upstream saw in the window
}

// Rate is the calls per second of the window.
func (r LoadResult) Rate() float64 { return float64(r.Calls) / r.Elapsed.Seconds() }

// P is the latency at quantile q.
func (r LoadResult) P(q float64) time.Duration {
	return Percentile(r.Lat, q)
}

// CPUPerCall is the CPU seconds of process name per call, in µs.
func (r LoadResult) CPUPerCall(name string) float64 {
	return r.CPU[name] / float64(r.Calls) * 1e6
}

// Percentile is the value at quantile q of sorted.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

// RunLoad runs a closed loop on each session (concurrency = len(sessions)):
// warm-up first, then a measured window of dur during which the CPU time of
// the watched processes is read before and after.
// With counted set (an upstream process), its request and connection
// counters are read around the window too.
func RunLoad(ctx context.Context, sessions []*mcp.ClientSession, call CallFunc, warmup, dur time.Duration, watch map[string]*Proc, counted *Proc) (LoadResult, error) {
	if warmup > 0 {
		if _, err := loop(ctx, sessions, call, warmup); err != nil {
			return LoadResult{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	var up0 Stats
	if counted != nil {
		var err error
		if up0, err = UpstreamStats(counted); err != nil {
			return LoadResult{}, err
		}
	}
	before := map[string]float64{}
	for name, p := range watch {
		v, err := CPUSeconds(p.Pid())
		if err != nil {
			return LoadResult{}, err
		}
		before[name] = v
	}
	start := time.Now()
	lat, err := loop(ctx, sessions, call, dur)
	elapsed := time.Since(start)
	if err != nil {
		return LoadResult{}, err
	}
	r := LoadResult{Calls: len(lat), Elapsed: elapsed, Lat: lat, CPU: map[string]float64{}}
	for name, p := range watch {
		v, err := CPUSeconds(p.Pid())
		if err != nil {
			return LoadResult{}, err
		}
		r.CPU[name] = v - before[name]
	}
	if counted != nil {
		up1, err := UpstreamStats(counted)
		if err != nil {
			return LoadResult{}, err
		}
		r.Up = Stats{Requests: up1.Requests - up0.Requests, Conns: up1.Conns - up0.Conns}
	}
	if r.Calls == 0 {
		return r, errors.New("no call completed")
	}
	return r, nil
}

// loop calls in a closed loop on every session until dur has passed and
// returns the sorted latencies. Any failed call fails the run.
func loop(ctx context.Context, sessions []*mcp.ClientSession, call CallFunc, dur time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(dur)
	lats := make([][]time.Duration, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			l := make([]time.Duration, 0, 4096)
			for {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				if err := call(ctx, cs); err != nil {
					errs[i] = err
					break
				}
				l = append(l, time.Since(t0))
			}
			lats[i] = l
		})
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	all := slices.Concat(lats...)
	slices.Sort(all)
	return all, nil
}

// HTTPRTT measures plain net/http GETs of url in a closed loop (C=1).
func HTTPRTT(ctx context.Context, hc *http.Client, url string, warmup, dur time.Duration) ([]time.Duration, error) {
	get := func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		var buf [64]byte
		for {
			if _, err := resp.Body.Read(buf[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
	var lat []time.Duration
	for _, phase := range []time.Duration{warmup, dur} {
		lat = lat[:0]
		deadline := time.Now().Add(phase)
		for time.Now().Before(deadline) {
			t0 := time.Now()
			if err := get(); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t0))
		}
	}
	slices.Sort(lat)
	return lat, nil
}

// ListAll lists every tool (following cursors) and returns them.
func ListAll(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" {
			return out, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// RawSession is a minimal MCP client over plain net/http: it times what
// a server takes to answer (the body read to its end) without the cost of
// a full client decoding and checking the result, which for thousands of
// tools is the larger part (go-sdk v1.8.0's ListTools checks every tool's
// annotations).
type RawSession struct {
	hc       *http.Client
	endpoint string
	id       string
	next     int
	buf      bytes.Buffer // the last answer's body
}

func (s *RawSession) post(ctx context.Context, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", clientProtocol)
	}
	return s.hc.Do(req)
}

// OpenRaw initializes a session.
func OpenRaw(ctx context.Context, hc *http.Client, endpoint string) (*RawSession, error) {
	s := &RawSession{hc: hc, endpoint: endpoint}
	resp, err := s.post(ctx, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+clientProtocol+`","capabilities":{},"clientInfo":{"name":"legate-bench-raw","version":"1"}}}`)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("initialize: %s", resp.Status)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	resp, err = s.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return s, nil
}

// ListRaw sends tools/list (following cursors) and returns the time until
// the last body was read and the tool names (decoded after the timing).
func (s *RawSession) ListRaw(ctx context.Context) (time.Duration, []string, error) {
	var names []string
	var took time.Duration
	cursor := ""
	for {
		s.next++
		params := "{}"
		if cursor != "" {
			b, _ := json.Marshal(map[string]string{"cursor": cursor})
			params = string(b)
		}
		t0 := time.Now()
		resp, err := s.post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, s.next, params))
		if err != nil {
			return 0, nil, err
		}
		// Read into the session's buffer, grown once: the time is Legate's
		// on the wire, not the harness's reallocations.
		s.buf.Reset()
		_, err = s.buf.ReadFrom(resp.Body)
		resp.Body.Close()
		took += time.Since(t0)
		body := s.buf.Bytes()
		if err != nil {
			return 0, nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, nil, fmt.Errorf("tools/list: %s", resp.Status)
		}
		var msg struct {
			Result *struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(jsonPayload(body), &msg); err != nil {
			return 0, nil, fmt.Errorf("tools/list: %w", err)
		}
		if msg.Error != nil || msg.Result == nil {
			return 0, nil, fmt.Errorf("tools/list: error %+v", msg.Error)
		}
		for _, t := range msg.Result.Tools {
			names = append(names, t.Name)
		}
		if cursor = msg.Result.NextCursor; cursor == "" {
			return took, names, nil
		}
	}
}

// jsonPayload is the JSON-RPC message of a response body: the body
// itself, or the data of its server-sent event.
func jsonPayload(body []byte) []byte {
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		return t
	}
	var out []byte
	for l := range bytes.Lines(body) {
		if d, ok := bytes.CutPrefix(l, []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(d)...)
		}
	}
	return out
}
