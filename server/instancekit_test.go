package server_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/instancekit"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// probeConn's tool reports the signing key its call got and claims the
// call's operation id in the call's operation record.
type probeConn struct{}

type probeResult struct {
	Key   string `json:"key"`
	State string `json:"state"`
}

func (probeConn) Validate() error                                    { return nil }
func (probeConn) Test(context.Context, connectors.Credentials) error { return nil }
func (probeConn) Tools() []connectors.Tool {
	noop := connectors.NewTool("noop", "Sign nothing.", legate.ClassRead,
		func(context.Context, *connectors.Call, *struct{}) (*legate.Result, error) {
			return &legate.Result{Structured: probeResult{}}, nil
		})
	return []connectors.Tool{noop, connectors.NewTool("probe", "Report the call's key and claim its operation.", legate.ClassRead,
		func(ctx context.Context, call *connectors.Call, _ *struct{}) (*legate.Result, error) {
			if call.Operations == nil {
				return nil, legate.Errorf(legate.CodeAdapterMapping, "no operations")
			}
			op, err := call.Operations.Begin(ctx, "fixed-key", time.Hour)
			if err != nil {
				return nil, err
			}
			return &legate.Result{Structured: probeResult{Key: hex.EncodeToString(call.Key()), State: string(op.State)}}, nil
		})}
}

func init() {
	connectors.Register(connectors.Type{Name: "kit-probe", Description: "test connector",
		New: func(connectors.Instance) (connectors.Connector, error) { return probeConn{}, nil }})
}

const probeConfig = `
policy:
  defaults: {read: allow}
connectors:
  - {id: p1, type: kit-probe}
  - {id: p2, type: kit-probe}
`

func probe(t *testing.T, gw *server.Gateway, tool string) probeResult {
	t.Helper()
	res, err := gw.Call(context.Background(), tool, json.RawMessage(`{}`), server.CallOptions{Caller: connectors.Caller{Principal: "p", Tenant: "t"}})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	var out probeResult
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out
}

// Each instance gets a key of its own, the same after a restart on the
// same store and vault, and the store's operation record scoped to it.
func TestConnectorKeyAndOperations(t *testing.T) {
	st := memStore(t)
	v := vault.New(st.Secrets(), vault.SourceFromEnv(func(string) string { return "" }, t.TempDir()), nil)
	cfg, err := config.Parse([]byte(probeConfig), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	start := func() *server.Gateway {
		gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st, Vault: v})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gw.Close() })
		return gw
	}
	gw := start()
	probe(t, gw, "p1.noop")
	if _, _, err := v.Get(context.Background(), "", instancekit.SigningKeyName); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("a call that signs nothing made the signing key: %v", err)
	}
	a, b := probe(t, gw, "p1.probe"), probe(t, gw, "p2.probe")
	if len(a.Key) != 64 || a.Key == b.Key {
		t.Fatalf("keys %q and %q: want two 32-byte keys", a.Key, b.Key)
	}
	if a.State != "new" || b.State != "new" {
		t.Fatalf("first claims: %s, %s; want new in each instance's scope", a.State, b.State)
	}
	again := probe(t, start(), "p1.probe")
	if again.Key != a.Key {
		t.Errorf("key after a restart %q; want %q", again.Key, a.Key)
	}
	if again.State != "busy" {
		t.Errorf("second claim %s; want busy, from the store", again.State)
	}
	op, err := st.Operations().Begin(context.Background(), "p2", "fixed-key", time.Now(), time.Hour)
	if err != nil || op.State != store.OpBusy {
		t.Errorf("the store's record of p2: %+v, %v", op, err)
	}
	if _, _, err := v.Get(context.Background(), "", instancekit.SigningKeyName); err != nil {
		t.Errorf("the signing key is not in the vault: %v", err)
	}
}

// A serving gateway prunes operation records past their retention.
func TestOperationRecordsArePruned(t *testing.T) {
	st := memStore(t)
	ops := st.Operations()
	ctx := context.Background()
	old := time.Now().Add(-instancekit.OperationRetention - time.Hour)
	for _, key := range []string{"old", "new"} {
		at := old
		if key == "new" {
			at = time.Now()
		}
		if _, err := ops.Begin(ctx, "p1", key, at, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Parse([]byte(probeConfig), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	gw.Start(ctx)
	gw.Close() // waits for the background work, the first prune included
	if op, _ := ops.Begin(ctx, "p1", "old", time.Now(), time.Minute); op.State != store.OpNew {
		t.Errorf("a record past retention is kept: %+v", op)
	}
	if op, _ := ops.Begin(ctx, "p1", "new", time.Now(), time.Minute); op.State != store.OpBusy {
		t.Errorf("a recent record is gone: %+v", op)
	}
}
