package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/embeddings/embeddingstest"
	"github.com/legate-mcp/legate/server"
)

// denseConfig is discoveryConfig with legate.search_tools' embeddings on.
func denseConfig(e *embeddingstest.Server) string {
	return discoveryConfig + `
search:
  embeddings_url: ` + e.URL() + `
  embeddings_model: ` + embeddingstest.Model + `
  embeddings_key: {env: LEGATE_EMBED_KEY}
  embeddings_batch: 2
`
}

// ranked is legate.search_tools' answer: the tools' names and how it ranked.
type ranked struct {
	names            []string
	ranking, dropped string
}

func searchTools(t *testing.T, gw *server.Gateway, query string) ranked {
	t.Helper()
	res, err := gw.Call(context.Background(), "legate.search_tools", json.RawMessage(`{"query":"`+query+`"}`), server.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Ranking string `json:"ranking"`
		Error   string `json:"embeddings_error"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return ranked{found(t, res), out.Ranking, out.Error}
}

// waitFused waits until gw's searches rank with embeddings: its tools
// are embedded.
func waitFused(t *testing.T, gw *server.Gateway) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if r := searchTools(t, gw, "panic boom"); r.ranking == "bm25+embeddings" {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("the tools were not embedded within 20s: %q", r.dropped)
		}
	}
}

// TestSearchToolsFusesEmbeddings: with search.embeddings_url, a serving
// gateway embeds every tool once (in batches, with the configured key),
// and legate.search_tools then finds a tool by a request that shares no
// word with it, which BM25 alone does not; a request is embedded once; a
// gateway not started (one CLI command) embeds nothing.
func TestSearchToolsFusesEmbeddings(t *testing.T) {
	const query = "crash on purpose"
	t.Setenv("LEGATE_EMBED_KEY", "sk-embed-0123456789")
	e := embeddingstest.New(t, "sk-embed-0123456789")
	e.Alias(query, "Panic.") // a model that knows a crash on purpose is a panic

	if r := searchTools(t, newGateway(t, discoveryConfig), query); len(r.names) > 0 && r.names[0] == "e__boom" || r.ranking != "" {
		t.Fatalf("BM25 alone found %v (ranking %q): the request must share no word with the tool", r.names, r.ranking)
	}

	idle := newGateway(t, denseConfig(e))
	if r := searchTools(t, idle, query); r.ranking != "bm25" || !strings.Contains(r.dropped, "being embedded") {
		t.Errorf("a gateway not started: ranking %q, embeddings error %q", r.ranking, r.dropped)
	}
	if n, _ := e.Counts(); n != 0 {
		t.Fatalf("a gateway not started sent %d embeddings requests", n)
	}

	gw := newGateway(t, denseConfig(e))
	gw.Start(t.Context())
	var r ranked
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if r = searchTools(t, gw, query); r.ranking == "bm25+embeddings" || time.Now().After(deadline) {
			break
		}
		if r.ranking != "bm25" || !strings.Contains(r.dropped, "being embedded") {
			t.Fatalf("while the tools are embedded: ranking %q, embeddings error %q", r.ranking, r.dropped)
		}
	}
	if r.ranking != "bm25+embeddings" || r.dropped != "" || len(r.names) == 0 || r.names[0] != "e__boom" {
		t.Fatalf("fused search found %v (ranking %q, embeddings error %q), want e__boom first", r.names, r.ranking, r.dropped)
	}
	requests, inputs := e.Counts()
	tools := inputs - 1 // all but the request
	if tools < 4 || requests != (tools+1)/2+1 {
		t.Errorf("%d requests for %d tools in batches of 2 and one request", requests, tools)
	}
	for _, s := range e.Seen() {
		if strings.Contains(s, "search_tools") || strings.Contains(s, "result_read") {
			t.Errorf("embedded %q, a tool no search is for", s)
		}
	}
	// The same request again is not embedded again, nor are the tools.
	if r = searchTools(t, gw, query); r.ranking != "bm25+embeddings" || r.names[0] != "e__boom" {
		t.Errorf("again: %v (ranking %q)", r.names, r.ranking)
	}
	if n, _ := e.Counts(); n != requests {
		t.Errorf("the same request again sent %d more requests", n-requests)
	}
	// A tool's exact name ranks it first, as BM25 alone does.
	if r = searchTools(t, gw, "e.echo"); r.ranking != "bm25" || r.names[0] != "e__echo" {
		t.Errorf("by name: %v (ranking %q)", r.names, r.ranking)
	}
}

// TestSearchToolsWithoutEmbeddingsEndpoint: an endpoint that refuses
// leaves the search to BM25, which says why (without the key), and is left
// alone for a while after.
func TestSearchToolsWithoutEmbeddingsEndpoint(t *testing.T) {
	t.Setenv("LEGATE_EMBED_KEY", "sk-embed-0123456789")
	e := embeddingstest.New(t, "sk-embed-0123456789")
	gw := newGateway(t, denseConfig(e))
	gw.Start(t.Context())
	waitFused(t, gw)
	e.Fail(http.StatusUnauthorized)
	r := searchTools(t, gw, "a request not embedded yet")
	if r.ranking != "bm25" || !strings.Contains(r.dropped, "401") || strings.Contains(r.dropped, "sk-embed") {
		t.Fatalf("with the endpoint refusing: ranking %q, embeddings error %q", r.ranking, r.dropped)
	}
	requests, _ := e.Counts()
	r = searchTools(t, gw, "another request not embedded yet")
	if n, _ := e.Counts(); n != requests || r.ranking != "bm25" || !strings.Contains(r.dropped, "tried again 30s after") {
		t.Errorf("right after the failure: %d requests, ranking %q, embeddings error %q", n-requests, r.ranking, r.dropped)
	}
	if r = searchTools(t, gw, "panic boom"); len(r.names) == 0 || r.names[0] != "e__boom" {
		t.Errorf("BM25 alone found %v", r.names)
	}
	resp, err := http.Get(strings.TrimSuffix(serve(t, gw), "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`legate_search_embedding_failures_total{stage="request"} 1`, `legate_search_embedding_failures_total{stage="catalog"} 0`, "\nlegate_search_embedded_tools "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	if strings.Contains(string(b), "legate_search_embedded_tools 0\n") {
		t.Error("/metrics says no tool is embedded")
	}
}

// TestSearchToolsShareEmbeddingsThroughTheStore: a gateway started on a
// store where another (a replica, or itself before a restart) embedded
// the tools asks the endpoint for none of them again, only for a request.
func TestSearchToolsShareEmbeddingsThroughTheStore(t *testing.T) {
	t.Setenv("LEGATE_TEST_KEY", "s3cret")
	t.Setenv("LEGATE_EMBED_KEY", "sk-embed-0123456789")
	e := embeddingstest.New(t, "sk-embed-0123456789")
	cfg, err := config.Parse([]byte(denseConfig(e)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	st := memStore(t)
	fused := func() {
		t.Helper()
		gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		defer gw.Close()
		gw.Start(t.Context())
		waitFused(t, gw)
	}
	fused()
	requests, inputs := e.Counts()
	fused()
	if r, in := e.Counts(); r != requests+1 || in != inputs+1 {
		t.Errorf("the second gateway sent %d requests embedding %d inputs; want the search's request alone", r-requests, in-inputs)
	}
}
