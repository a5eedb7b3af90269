package kb_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/kb"
)

var update = flag.Bool("update", false, "rewrite the README's config table and the corpus's PDF")

func TestContract(t *testing.T) {
	sample, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connectortest.Run(t, connectortest.Case{Type: "kb", Config: string(sample)})
}

func TestReadme(t *testing.T) { connectortest.Readme(t, "kb", *update) }

// corpus is the absolute path of the shipped corpus.
func corpus(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// build builds a kb instance of config (YAML), closed at the test's end.
func build(t testing.TB, id, config string) connectors.Connector {
	t.Helper()
	c := connectortest.Build(t, "kb", id, config)
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	return c
}

func folderConfig(dirs ...string) string {
	var b strings.Builder
	b.WriteString("folders:\n")
	for _, d := range dirs {
		b.WriteString("  - " + d + "\n")
	}
	return b.String()
}

// caller is who calls, and with what key and credentials.
type caller struct {
	tenant string
	key    []byte
	creds  connectortest.Creds
}

var alice = caller{tenant: "acme", key: []byte("instance key of the test, 32 bytes")}

// run calls tool of c with args as who, and returns its result or error.
func run(t testing.TB, c connectors.Connector, who caller, tool string, args any) (*legate.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range c.Tools() {
		if tl.Name != tool {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		call := &connectors.Call{Tool: tool, Args: raw, Caller: connectors.Caller{Principal: "p", Tenant: who.tenant},
			Credentials: who.creds, OperationID: "op"}
		if who.key != nil {
			call.Key = func() []byte { return who.key }
		}
		return tl.Run(ctx, call)
	}
	t.Fatalf("no tool %s", tool)
	return nil, nil
}

func search(t testing.TB, c connectors.Connector, who caller, query string, limit int) kb.SearchResult {
	t.Helper()
	res, err := run(t, c, who, "search", map[string]any{"query": query, "limit": limit})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	return res.Structured.(kb.SearchResult)
}

func read(t testing.TB, c connectors.Connector, who caller, args map[string]any) (kb.ReadResult, error) {
	t.Helper()
	res, err := run(t, c, who, "read", args)
	if err != nil {
		return kb.ReadResult{}, err
	}
	return res.Structured.(kb.ReadResult), nil
}

func codeOf(err error) legate.Code {
	var le *legate.Error
	if errors.As(err, &le) {
		return le.Code
	}
	return ""
}

// TestValidate: what a config must hold, each problem named by its key.
func TestValidate(t *testing.T) {
	ct, _ := connectors.Lookup("kb")
	for config, want := range map[string]string{
		"chunk_chars: 500":                          "config.folders: the instance indexes nothing",
		"folders: [relative/dir]":                   "config.folders[0]: must be an absolute path",
		"folders: [/a, /a/]":                        "config.folders[1]: /a/ is listed twice",
		"urls: [ftp://example.com/x]":               "config.urls[0]: must be an absolute http or https URL",
		"urls: [http://127.0.0.1:8080/x]":           "config.urls[0]:",
		"folders: [/a]\nrefresh_interval: 10ms":     "config.refresh_interval: must be 0 or at least 1s",
		"folders: [/a]\nchunk_chars: 10":            "config.chunk_chars: must be between 200 and 20000",
		"folders: [/a]\nembeddings_url: http://x/e": "config.embeddings_model: is required with embeddings_url",
		"folders: [/a]\nembeddings_model: m":        "config.embeddings_model: is set without embeddings_url",
		"folders: [/a]\nmax_read_chars: 10":         "config.max_read_chars: must be between 500",
	} {
		node := yamlNode(t, config)
		_, err := connectors.Build(ct, "kb", node, "c")
		if err == nil || !strings.Contains(err.Error(), "c."+want) {
			t.Errorf("%q: got %v, want an error with %q", config, err, want)
		}
	}
}

func yamlNode(t testing.TB, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}
