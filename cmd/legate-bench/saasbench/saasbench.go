// Package saasbench is the harness's scenario P7: a read through each SaaS
// connector — the real binary, a go-sdk client, the whole call path, the
// connector and its client library — against the same library calling the
// same stand-in directly, in the same rounds. The stand-ins answer one
// read each, as the provider would, from memory.
package saasbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/google/go-github/v84/github"
	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

// Target is the least ratio of calls/s through Legate to the library's own.
const Target = 0.8

// token is the stand-ins' credential; Legate reads it from the environment.
const token = "xoxb-bench-token"

// reader is one connector's read: its instance config, the tool called
// through Legate with its arguments, and the same read through the
// library directly.
type reader struct {
	name   string // the connector type, and the instance id
	what   string // the read, for the table
	config string // the instance's config section, a format of the stand-in's URL
	tool   string
	args   map[string]any
	direct func(ctx context.Context, base string, hc *http.Client) error
}

var readers = []reader{
	{
		name: "slack", what: "slack.list_channels (20 channels)",
		config: "{api_url: \"%s/api/\", allow_private_networks: true}", tool: "slack__list_channels", args: map[string]any{"limit": 20},
		direct: func(ctx context.Context, base string, hc *http.Client) error {
			api := slack.New(token, slack.OptionAPIURL(base+"/api/"), slack.OptionHTTPClient(hc))
			chans, _, err := api.GetConversationsContext(ctx, &slack.GetConversationsParameters{Limit: 20, ExcludeArchived: true, Types: []string{"public_channel"}})
			if err == nil && len(chans) != 20 {
				err = fmt.Errorf("slack: %d channels, want 20", len(chans))
			}
			return err
		},
	},
	{
		name: "github", what: "github.get_issue",
		config: "{base_url: \"%s/\", allow_private_networks: true}", tool: "github__get_issue", args: map[string]any{"repo": "acme/api", "number": 1},
		direct: func(ctx context.Context, base string, hc *http.Client) error {
			c, err := github.NewClient(hc).WithAuthToken(token).WithEnterpriseURLs(base+"/", base+"/")
			if err != nil {
				return err
			}
			is, _, err := c.Issues.Get(ctx, "acme", "api", 1)
			if err == nil && is.GetNumber() != 1 {
				err = fmt.Errorf("github: issue %d, want 1", is.GetNumber())
			}
			return err
		},
	},
}

// Run measures P7.
func Run(ctx context.Context, o benchkit.Options) ([]benchkit.Row, error) {
	base, stop, err := standIn()
	if err != nil {
		return nil, err
	}
	defer stop()
	var cfg strings.Builder
	cfg.WriteString("connectors:\n")
	for _, r := range readers {
		fmt.Fprintf(&cfg, "  - id: %s\n    type: %s\n    config: "+r.config+"\n", r.name, r.name, base)
		fmt.Fprintf(&cfg, "    credentials: {%s: {env: LEGATE_BENCH_TOKEN}}\n", map[string]string{"slack": "bot_token", "github": "token"}[r.name])
	}
	cs := o.Upto(8)
	lg, err := benchkit.StartLegate(ctx, o, "p7", cfg.String(), "LEGATE_BENCH_TOKEN="+token)
	if err != nil {
		return nil, err
	}
	defer lg.Stop()
	sessions, err := lg.OpenSessions(ctx, cs[len(cs)-1])
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var rows []benchkit.Row
	for _, r := range readers {
		first, err := benchkit.Call(ctx, sessions[0], r.tool, r.args)
		if err != nil {
			return nil, err
		}
		hop, err := benchkit.StartHop(ctx, o, "p7-"+r.name, first)
		if err != nil {
			return nil, err
		}
		hopSessions, err := hop.OpenSessions(ctx, cs[len(cs)-1])
		if err != nil {
			hop.Stop()
			return nil, err
		}
		sides := []benchkit.Side{
			{Name: r.name + " directly", Call: func(ctx context.Context, _ int) error { return r.direct(ctx, base, hc) }},
			{Name: r.name + " through Legate", Call: func(ctx context.Context, i int) error {
				_, err := benchkit.Call(ctx, sessions[i], r.tool, r.args)
				return err
			}, PID: lg.Cmd.Process.Pid},
			{Name: "the MCP hop alone", Call: func(ctx context.Context, i int) error {
				_, err := benchkit.Call(ctx, hopSessions[i], benchkit.HopTool, nil)
				return err
			}, PID: hop.Cmd.Process.Pid},
		}
		res, err := benchkit.Rounds(ctx, o, "P7", sides, cs)
		for _, s := range hopSessions {
			s.Close()
		}
		hop.Stop()
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			rows = append(rows, benchkit.Compare("P7", r.what, c, res[c][0], res[c][1], Target,
				"through Legate (client, call path, connector, library) against the library calling the same stand-in directly")...)
			rows = append(rows, benchkit.HopRows("P7", r.what, c, res[c][0], res[c][2], res[c][1], Target)...)
		}
	}
	return rows, nil
}

// standIn serves the providers' reads on one loopback port: Slack's
// conversations.list under /api/, GitHub Enterprise's issue under /api/v3/.
func standIn() (string, func(), error) {
	var chans []map[string]any
	for i := range 20 {
		chans = append(chans, map[string]any{"id": fmt.Sprintf("C%08d", i), "name": fmt.Sprintf("team-%02d", i), "is_channel": true,
			"created": 1700000000 + i, "creator": "U000001", "is_archived": false, "is_general": i == 0, "is_member": true,
			"topic":   map[string]any{"value": "Work of team " + fmt.Sprint(i), "creator": "U000001", "last_set": 1700000000},
			"purpose": map[string]any{"value": "Coordination", "creator": "U000001", "last_set": 1700000000}, "num_members": 12 + i})
	}
	channels, _ := json.Marshal(map[string]any{"ok": true, "channels": chans, "response_metadata": map[string]any{"next_cursor": ""}})
	issue, _ := json.Marshal(map[string]any{"id": 1001, "node_id": "I_kwDOA", "number": 1, "title": "Checkout fails on empty cart",
		"state": "open", "body": "Steps to reproduce:\n1. Empty the cart\n2. Check out\n\nExpected a message, got a 500.",
		"user":     map[string]any{"login": "octo", "id": 1, "type": "User"},
		"labels":   []map[string]any{{"id": 1, "name": "bug", "color": "d73a4a"}},
		"comments": 3, "created_at": "2026-11-01T10:00:00Z", "updated_at": "2026-11-02T11:00:00Z",
		"html_url": "https://github.example/acme/api/issues/1", "url": "https://github.example/api/v3/repos/acme/api/issues/1"})
	mux := http.NewServeMux()
	mux.HandleFunc("/api/conversations.list", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(channels)
	})
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues/1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(issue)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}
