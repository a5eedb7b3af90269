package connectors_test

import (
	"context"
	"encoding/json"
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
