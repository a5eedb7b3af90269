package instances_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/vault"
)

// leaky is a connector whose failures quote its credential, as a
// provider's error echoing a key would.
type leaky struct{}

func (leaky) Validate() error { return nil }

func (leaky) Test(ctx context.Context, creds connectors.Credentials) error {
	key, _ := creds.Get(ctx, "key")
	return errors.New("refused key " + key)
}

func (leaky) Tools() []connectors.Tool {
	return []connectors.Tool{{Name: "fail", Description: "fails", Class: legate.ClassRead, InputSchema: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, call *connectors.Call) (*legate.Result, error) {
			key, _ := call.Credentials.Get(ctx, "key")
			return nil, errors.New("connection reset, key " + key)
		}}}
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{Name: "leaky-test", Description: "fails quoting its key", Credentials: []connectors.Credential{{Name: "key"}}},
		func(connectors.Instance, *struct{}) (connectors.Connector, error) { return leaky{}, nil }))
}

// The record keeps a failure's and a test's text with the instance's
// secrets masked: the admin API and the panel show it.
func TestHealthMasksSecrets(t *testing.T) {
	t.Setenv("LEAKY_TEST_KEY", "sk-leaky-1234567890")
	r := &vault.Resolver{Masks: vault.NewMasks()}
	def := sources.InstanceDef{ID: "leaky", Type: "leaky-test", Path: "connectors[0]", Credentials: map[string]vault.Ref{"key": {Env: "LEAKY_TEST_KEY"}}}
	set, err := instances.Build([]sources.InstanceDef{def}, nil, instances.Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	in := set[0]
	tool := set.Entries()[0].Target.(*instances.Tool)
	if _, err := tool.Run(context.Background(), &connectors.Call{Tool: "fail", Args: json.RawMessage(`{}`), Credentials: in.Creds}); err == nil {
		t.Fatal("no failure")
	}
	set.Test(context.Background())
	s := in.Health.State()
	if s.Failures != 1 || s.Test == nil || s.Test.OK {
		t.Fatalf("state: %+v", s)
	}
	for _, text := range []string{s.LastFailure, s.Test.Error} {
		if strings.Contains(text, "sk-leaky-1234567890") || !strings.Contains(text, legate.Redacted) {
			t.Errorf("unmasked: %q", text)
		}
	}
}
