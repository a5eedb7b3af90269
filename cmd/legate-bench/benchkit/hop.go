package benchkit

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
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
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(o.Dir, name+"-hop.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return start(ctx, o, name+"-hop", nil, func(addr string) []string {
		return []string{exe, "hop", "-addr", addr, "-result", path}
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
	fs.Parse(args)
	res, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	if !json.Valid(res) {
		return fmt.Errorf("%s: not JSON", *file)
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

// HopRows are the rows that put a scenario's read through Legate beside
// the bound of any gateway at C=c: the hop alone (StartHop) against the
// direct call, the bound 1/(1/direct + 1/hop) round by round against the
// direct call, and Legate against that bound. t says which of the last two
// is judged.
func HopRows(scenario, what string, c int, direct, hop, legate Series, t HopTargets) []Row {
	bound := make([]float64, len(direct.Rate))
	for i := range bound {
		if i < len(hop.Rate) && direct.Rate[i] > 0 && hop.Rate[i] > 0 {
			bound[i] = 1 / (1/direct.Rate[i] + 1/hop.Rate[i])
		}
	}
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

// HopTargets are HopRows' targets, each 0 when not judged: Direct is the
// scenario's target against the direct call, shown beside the bound (which
// no gateway can pass, so it is marked "bound", not judged); Bound is the
// least ratio of Legate's calls/s to the bound, judged PASS or FAIL.
type HopTargets struct{ Direct, Bound float64 }
