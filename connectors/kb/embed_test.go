package kb_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/embeddings/embeddingstest"
)

func embeddingsConfig(root string, e *embeddingstest.Server, batch int) string {
	return folderConfig(root) + "embeddings_url: " + e.URL() + "\nembeddings_model: " + embeddingstest.Model + "\nembeddings_batch: " + itoa(batch) + "\n"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestEmbeddingsAreFused: with an embeddings endpoint, each passage is
// embedded once (in batches, with the instance's key), the query once a
// search, and the two rankings fused: a passage the model puts first and
// BM25 second comes first.
func TestEmbeddingsAreFused(t *testing.T) {
	root := corpus(t)
	const query = "what to do when the tunnel fails"
	target := filepath.Join(root, "it", "vpn.html")
	lexical := search(t, build(t, "kb", folderConfig(root)), alice, query, 5)
	if lexical.Ranking != "bm25" || lexical.Passages[0].Source == target || lexical.Passages[1].Source != target {
		t.Fatalf("BM25 alone should rank the VPN's troubleshooting second: %+v", lexical.Passages)
	}

	e := embeddingstest.New(t, "sk-embed-0123456789")
	e.Alias(query, "switch to the TCP fallback profile")
	c := build(t, "kb", embeddingsConfig(root, e, 16))
	who := caller{tenant: alice.tenant, key: alice.key, creds: connectortest.Creds{"embeddings_api_key": "sk-embed-0123456789"}}
	fused := search(t, c, who, query, 5)
	if fused.Ranking != "bm25+embeddings" || fused.DenseError != "" {
		t.Fatalf("ranking %s, dense error %q", fused.Ranking, fused.DenseError)
	}
	if p := fused.Passages[0]; p.Source != target || strings.Join(p.Headings, "/") != "VPN access/Troubleshooting" {
		t.Errorf("fused first: %s %v, want the VPN's troubleshooting", p.Source, p.Headings)
	}
	requests, inputs := e.Counts()
	if want := (fused.Indexed+15)/16 + 1; requests != want || inputs != fused.Indexed+1 {
		t.Errorf("%d requests of %d inputs for %d passages in batches of 16 and a query; want %d requests", requests, inputs, fused.Indexed, want)
	}
	// Passages are embedded once: the next search embeds its query alone.
	search(t, c, who, "laptop replacement", 5)
	if r, in := e.Counts(); r != requests+1 || in != inputs+1 {
		t.Errorf("the second search sent %d requests of %d inputs, want 1 of 1", r-requests, in-inputs)
	}
}

// TestEmbeddingsFailSafe: an endpoint that refuses leaves the search to
// BM25 alone, which says why, with the key masked out of the reason.
func TestEmbeddingsFailSafe(t *testing.T) {
	root := corpus(t)
	e := embeddingstest.New(t, "sk-embed-0123456789")
	e.Fail(http.StatusUnauthorized)
	c := build(t, "kb", embeddingsConfig(root, e, 64))
	who := caller{tenant: alice.tenant, key: alice.key, creds: connectortest.Creds{"embeddings_api_key": "sk-embed-0123456789"}}
	r := search(t, c, who, "how long are database backups kept", 5)
	if r.Ranking != "bm25" || len(r.Passages) == 0 || !strings.Contains(r.DenseError, "401") {
		t.Fatalf("ranking %s, %d passages, dense error %q", r.Ranking, len(r.Passages), r.DenseError)
	}
	if strings.Contains(r.DenseError, "sk-embed-0123456789") {
		t.Errorf("the key shows in the error: %s", r.DenseError)
	}
	// The next search leaves the endpoint alone for a while, and says so.
	requests, _ := e.Counts()
	r = search(t, c, who, "how long are database backups kept", 5)
	if n, _ := e.Counts(); n != requests || r.Ranking != "bm25" || !strings.Contains(r.DenseError, "401") || !strings.Contains(r.DenseError, "tried again 30s after") {
		t.Errorf("a search right after the failure sent %d requests, ranking %s, dense error %q", n-requests, r.Ranking, r.DenseError)
	}
	if err := c.Test(t.Context(), who.creds); err == nil || strings.Contains(err.Error(), "sk-embed") {
		t.Errorf("Test with a refusing endpoint: %v", err)
	}
}

// TestQualityWithEmbeddings ranks the held-out questions with BM25 fused
// with the scripted endpoint's trigram vectors (no alias): the fusion
// must answer at least as many within five as BM25 alone. The figure with
// a real model is measured by hand (README).
func TestQualityWithEmbeddings(t *testing.T) {
	root := corpus(t)
	qs := questions(t)
	lexical, _ := measure(t, build(t, "kb", folderConfig(root)), alice, root, qs)
	e := embeddingstest.New(t, "")
	fused, missed := measure(t, build(t, "kb", embeddingsConfig(root, e, 64)), alice, root, qs)
	t.Logf("BM25 alone:           top-5 %.3f, top-1 %.3f, MRR@5 %.3f", lexical.top5, lexical.top1, lexical.mrr)
	t.Logf("BM25 + trigram model: top-5 %.3f, top-1 %.3f, MRR@5 %.3f", fused.top5, fused.top1, fused.mrr)
	for _, m := range missed {
		t.Logf("missed: %s", m)
	}
	if fused.top5 < lexical.top5 {
		t.Errorf("fused top-5 %.3f below BM25's %.3f", fused.top5, lexical.top5)
	}
}
