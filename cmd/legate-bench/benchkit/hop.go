package benchkit

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HopTool is the one tool of the server StartHop runs.
const HopTool = "hop"

// StartHop runs, as a process of its own, an MCP server (Streamable HTTP at
// /mcp) with one tool, HopTool, that answers every call with res from bytes
// encoded once: the MCP hop of a scenario with nothing behind it.
// A native connector's read through any gateway costs at least this hop
// plus the read itself, so 1/(1/direct + 1/hop) (HopRows) bounds what a
// gateway that did no other work could reach. The harness binary serves it
// as its subcommand "hop" (HopMain).
func StartHop(ctx context.Context, o Options, name string, res *mcp.CallToolResult) (*Legate, error) {
	return startHop(ctx, o, name+"-hop", res, nil)
}

// RawRead is a provider's read as bytes: the request a client library
// makes for a connector's read, sent as it is, its answer read to the end
// and not decoded.
type RawRead struct {
	Method, URL string
	Header      map[string]string `json:",omitempty"`
	Body        string            `json:",omitempty"`
}

// StartLeast runs, as StartHop does, the least gateway of a read: the MCP
// hop that, before answering each call with res, makes the provider's read
// raw (RawRead) on a kept-alive connection. Any gateway does at least
// this much for the call, and more (it decodes the answer, at least), so
// a gateway's calls/s against it says how much of what separates it from
// the bound of HopRows (which adds the read as the library makes it in
// the harness's own process, to the hop) is its own work.
func StartLeast(ctx context.Context, o Options, name string, res *mcp.CallToolResult, read RawRead) (*Legate, error) {
	return startHop(ctx, o, name+"-least", res, &read)
}

func startHop(ctx context.Context, o Options, name string, res *mcp.CallToolResult, read *RawRead) (*Legate, error) {
	args := []string{"hop"}
	write := func(flag string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		path := filepath.Join(o.Dir, name+"-"+flag+".json")
		args = append(args, "-"+flag, path)
		return os.WriteFile(path, b, 0o600)
	}
	if err := write("result", res); err != nil {
		return nil, err
	}
	if read != nil {
		if err := write("read", read); err != nil {
			return nil, err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return start(ctx, o, name, nil, func(addr string) []string {
		return append([]string{exe}, append(args, "-addr", addr)...)
	})
}

// HopMain is the harness's subcommand "hop": the server StartHop runs. It
// does the least an MCP server over Streamable HTTP can: no sessions, each
// POST's id and method read, the answer written from bytes encoded once —
// tools/call's is the result given — so that the bound HopRows derives
// from it holds for any gateway, however fast.
func HopMain(args []string) error {
	fs := flag.NewFlagSet("hop", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	file := fs.String("result", "", "the CallToolResult (JSON) every call answers")
	readFile := fs.String("read", "", "a RawRead (JSON) made before each tools/call is answered (StartLeast)")
	fs.Parse(args)
	res, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	if !json.Valid(res) {
		return fmt.Errorf("%s: not JSON", *file)
	}
	read := func() error { return nil }
	if *readFile != "" {
		if read, err = rawReader(*readFile); err != nil {
			return err
		}
	}
	results := map[string][]byte{
		"tools/call": res,
		"tools/list": []byte(`{"tools":[{"name":"` + HopTool + `","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`),
		"ping":       []byte(`{}`),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result, ok := results[req.Method]
		if req.Method == "tools/call" {
			if err := read(); err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
		}
		if req.Method == "initialize" {
			result, ok = []byte(`{"protocolVersion":"`+req.Params.ProtocolVersion+`","capabilities":{"tools":{}},"serverInfo":{"name":"bench-hop","version":"1"}}`), true
		}
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
			return
		}
		b := make([]byte, 0, len(result)+64)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(append(b, req.ID...), `,"result":`...)
		b = append(append(b, result...), '}')
		w.Write(b)
	})
	mux.HandleFunc("GET /readyz", func(http.ResponseWriter, *http.Request) {})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, os.Interrupt)
		<-c
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// rawReader returns the read of the RawRead in file: its request made on
// a client that keeps its connections, its answer read to the end.
func rawReader(file string) (func() error, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rr RawRead
	if err := json.Unmarshal(b, &rr); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return func() error {
		req, err := http.NewRequest(rr.Method, rr.URL, strings.NewReader(rr.Body))
		if err != nil {
			return err
		}
		for k, v := range rr.Header {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: %s", rr.Method, rr.URL, resp.Status)
		}
		return nil
	}, nil
}

// HopRows are the rows that put a scenario's read through Legate beside
// the bound of any gateway at C=c: the hop alone (StartHop) against the
// direct call, the bound 1/(1/direct + 1/hop) round by round against the
// direct call, and Legate against that bound. t says which of the last two
// is judged.
func HopRows(scenario, what string, c int, direct, hop, legate Series, t HopTargets) []Row {
	bound := bounds(direct, hop)
	rows := []Row{
		{Scenario: scenario, Metric: fmt.Sprintf("calls/s of the MCP hop alone (a server writing the same result from bytes encoded once), %s, C=%d (baseline: directly)", what, c),
			Unit: "calls/s", Baseline: Median(direct.Rate), Legate: Median(hop.Rate), Ratio: Median(Ratios(hop.Rate, direct.Rate))},
		{Scenario: scenario, Metric: fmt.Sprintf("calls/s a gateway costing only that hop could reach, 1/(1/direct + 1/hop), %s, C=%d (baseline: directly)", what, c),
			Unit: "calls/s", Baseline: Median(direct.Rate), Legate: Median(bound), Ratio: Median(Ratios(bound, direct.Rate))},
		{Scenario: scenario, Metric: fmt.Sprintf("calls/s through Legate against that bound, %s, C=%d (baseline: the bound)", what, c),
			Unit: "calls/s", Baseline: Median(bound), Legate: Median(legate.Rate), Ratio: Median(Ratios(legate.Rate, bound))},
	}
	if t.Direct > 0 {
		rows[1].Target, rows[1].Result = fmt.Sprintf("≥ %.1f× direct", t.Direct), "bound"
	}
	if t.Bound > 0 {
		rows[2].Target, rows[2].Result = fmt.Sprintf("≥ %.1f× the bound", t.Bound), PassFail(rows[2].Ratio >= t.Bound)
	}
	return rows
}

// LeastRows are the rows that put the least gateway of a read (StartLeast)
// beside the bound of HopRows and Legate beside it at C=c: how far the
// bound is from what any gateway reaches, and how much of Legate's
// distance from the bound is its own work. Informative, not judged.
func LeastRows(scenario, what string, c int, direct, hop, least, legate Series) []Row {
	bound := bounds(direct, hop)
	return []Row{
		{Scenario: scenario, Metric: fmt.Sprintf("calls/s of the least gateway (the MCP hop and the provider's read as raw bytes, nothing decoded), %s, C=%d (baseline: the bound)", what, c),
			Unit: "calls/s", Baseline: Median(bound), Legate: Median(least.Rate), Ratio: Median(Ratios(least.Rate, bound))},
		{Scenario: scenario, Metric: fmt.Sprintf("calls/s through Legate against the least gateway, %s, C=%d (baseline: the least gateway)", what, c),
			Unit: "calls/s", Baseline: Median(least.Rate), Legate: Median(legate.Rate), Ratio: Median(Ratios(legate.Rate, least.Rate))},
		{Scenario: scenario, Metric: fmt.Sprintf("CPU per call, Legate against the least gateway, %s, C=%d (each its process)", what, c),
			Unit: "µs", Baseline: Median(least.CPU), Legate: Median(legate.CPU), Ratio: Median(Ratios(legate.CPU, least.CPU))},
	}
}

// bounds is the bound of HopRows round by round: 1/(1/direct + 1/hop).
func bounds(direct, hop Series) []float64 {
	bound := make([]float64, len(direct.Rate))
	for i := range bound {
		if i < len(hop.Rate) && direct.Rate[i] > 0 && hop.Rate[i] > 0 {
			bound[i] = 1 / (1/direct.Rate[i] + 1/hop.Rate[i])
		}
	}
	return bound
}

// HopTargets are HopRows' targets, each 0 when not judged: Direct is the
// scenario's target against the direct call, shown beside the bound (which
// no gateway can pass, so it is marked "bound", not judged); Bound is the
// least ratio of Legate's calls/s to the bound, judged PASS or FAIL.
type HopTargets struct{ Direct, Bound float64 }
