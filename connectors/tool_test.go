package connectors_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}

func echoTool() connectors.Tool {
	return connectors.NewTool("echo", "Echo text", legate.ClassRead, func(_ context.Context, _ *connectors.Call, in *echoIn) (*legate.Result, error) {
		return &legate.Result{Structured: echoOut{Text: in.Text, Count: 1}}, nil
	})
}

func TestReturningDerivesTheOutputSchema(t *testing.T) {
	tool := connectors.Returning[echoOut](echoTool())
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(tool.OutputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["text"] == nil || schema.Properties["count"] == nil {
		t.Fatalf("output schema %s", tool.OutputSchema)
	}
	if err := connectors.CheckTools([]connectors.Tool{tool}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckToolsRefusesANonObjectOutputSchema(t *testing.T) {
	tool := echoTool()
	tool.OutputSchema = json.RawMessage(`{"type":"string"}`)
	err := connectors.CheckTools([]connectors.Tool{tool})
	if err == nil || !strings.Contains(err.Error(), "output schema") {
		t.Fatalf("CheckTools = %v; want an output schema error", err)
	}
}

type strictIn struct {
	Repo   string   `json:"repo"`
	Number int      `json:"number,omitempty"`
	Labels []string `json:"labels,omitempty"`
	Nested *struct {
		Name string `json:"name"`
	} `json:"nested,omitempty"`
}

// Arguments are decoded strictly: what the schema does not name — a key
// in another case, an unknown key at any depth — or a mistyped value is
// INVALID_ARGUMENT; what it names arrives.
func TestNewToolDecodesArgumentsStrictly(t *testing.T) {
	var got *strictIn
	tool := connectors.NewTool("strict", "", legate.ClassRead, func(_ context.Context, _ *connectors.Call, in *strictIn) (*legate.Result, error) {
		got = in
		return &legate.Result{Text: "ok"}, nil
	})
	for _, args := range []string{
		`{"Repo":"a/b"}`, `{"repo":"a/b","extra":1}`, `{"repo":"a/b","nested":{"name":"x","other":2}}`,
		`{"repo":"a/b","number":"7"}`, `{"repo":"a/b","number":1.5}`, `{"repo":"a/b","labels":"x"}`, `[1]`, `{"repo":`,
	} {
		_, err := tool.Run(context.Background(), &connectors.Call{Tool: "strict", Args: json.RawMessage(args)})
		var le *legate.Error
		if !errors.As(err, &le) || le.Code != legate.CodeInvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", args, err)
		}
	}
	if _, err := tool.Run(context.Background(), &connectors.Call{Tool: "strict", Args: json.RawMessage(`{"repo":"a/b","number":7,"labels":["x"],"nested":{"name":"n"}}`)}); err != nil {
		t.Fatal(err)
	}
	if got.Repo != "a/b" || got.Number != 7 || len(got.Labels) != 1 || got.Nested == nil || got.Nested.Name != "n" {
		t.Errorf("decoded %+v", got)
	}
}

func BenchmarkNewToolArgs(b *testing.B) {
	tool := connectors.NewTool("strict", "", legate.ClassRead, func(_ context.Context, _ *connectors.Call, in *strictIn) (*legate.Result, error) {
		return nil, nil
	})
	call := &connectors.Call{Tool: "strict", Args: json.RawMessage(`{"repo":"acme/api","number":1}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Run(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}
