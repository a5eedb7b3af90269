package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// The audit event of a quarantine is written by a serving gateway, once
// per tool and definition, restarts included; a gateway made for one CLI
// command (started for its audit alone) writes none, logs the warning
// once, and still audits the call it refused, with its principal.
func TestQuarantineIsAuditedOnceByTheServer(t *testing.T) {
	st := memStore(t)
	ctx := context.Background()
	tools := []store.CachedTool{{Name: "echo", Definition: json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`), Hash: "h1"}}
	if err := st.Upstreams().SaveCache(ctx, "held", tools, nil, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(allowAll+"upstreams:\n  - {id: held, url: \"http://127.0.0.1:1/mcp\", pin: strict}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	newGateway := func(log *slog.Logger) *server.Gateway {
		t.Helper()
		gw, err := server.New(ctx, server.Options{Config: cfg, Store: st, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return gw
	}
	events := func() (quarantined, refused int) {
		t.Helper()
		rows, err := st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.held.echo"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			switch {
			case r.Outcome == "QUARANTINED":
				quarantined++
			case r.Outcome == "POLICY_DENIED" && r.Principal == "local" && r.Session == "cli":
				refused++
			}
		}
		return quarantined, refused
	}

	// Three CLI commands' gateways, each calling the tool.
	for range 3 {
		var logs bytes.Buffer
		gw := newGateway(slog.New(slog.NewTextHandler(&logs, nil)))
		gw.StartAudit(ctx)
		for range 2 {
			if res, err := gw.Call(ctx, "mcp.held.echo", nil, server.CallOptions{Caller: connectors.Caller{Session: "cli"}}); err != nil || !res.IsError {
				t.Fatalf("call to a quarantined tool: %v %v", res, err)
			}
		}
		gw.Close()
		if n := strings.Count(logs.String(), "upstream tool quarantined"); n != 1 {
			t.Errorf("one CLI gateway logged the quarantine %d times:\n%s", n, logs.String())
		}
	}
	if q, r := events(); q != 0 || r != 6 {
		t.Fatalf("after the CLI commands: %d quarantine events (want 0), %d refused calls audited (want 6)", q, r)
	}

	// A server, started twice.
	for range 2 {
		gw := newGateway(nil)
		gw.Start(ctx)
		gw.Close()
	}
	if q, _ := events(); q != 1 {
		t.Fatalf("after two server runs: %d quarantine events, want 1", q)
	}
}
