package kb_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/kb"
)

// waitFor searches c for query each time its index is published, until
// ok holds of the result or the deadline passes.
func waitFor(t *testing.T, c connectors.Connector, query string, ok func(kb.SearchResult) bool) kb.SearchResult {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		next := kb.Updated(c) // taken before the search, so no publication is missed
		r := search(t, c, alice, query, 5)
		if ok(r) {
			return r
		}
		select {
		case <-next:
		case <-deadline.C:
			t.Fatalf("%q: the index did not change as expected within 20s; last result %+v", query, r)
		}
	}
}

func hasSource(src string) func(kb.SearchResult) bool {
	return func(r kb.SearchResult) bool {
		for _, p := range r.Passages {
			if p.Source == src {
				return true
			}
		}
		return false
	}
}

func not(f func(kb.SearchResult) bool) func(kb.SearchResult) bool {
	return func(r kb.SearchResult) bool { return !f(r) }
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFolderChangesAreIndexed: a file added, changed or removed in a
// watched folder, or in a folder made after the index was built, is
// indexed again without a restart; a ref to a passage that changed reads
// no more.
func TestFolderChangesAreIndexed(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, corpus(t), dir)
	c := build(t, "kb", folderConfig(dir))
	if r := search(t, c, alice, "zeppelin hangar mooring", 5); len(r.Passages) != 0 {
		t.Fatalf("found before it was written: %+v", r.Passages)
	}
	// Added.
	p := filepath.Join(dir, "handbook", "airships.md")
	if err := os.WriteFile(p, []byte("# Airships\n\n## Mooring\n\nThe zeppelin is moored at hangar 7.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := waitFor(t, c, "zeppelin hangar mooring", hasSource(p))
	old := r.Passages[0]
	if old.Title != "Airships" || strings.Join(old.Headings, "/") != "Airships/Mooring" {
		t.Errorf("new passage %q under %q", old.Title, old.Headings)
	}
	// Changed.
	if err := os.WriteFile(p, []byte("# Airships\n\n## Mooring\n\nThe zeppelin is moored at hangar 9 since the storm.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "zeppelin storm", func(r kb.SearchResult) bool {
		return hasSource(p)(r) && strings.Contains(r.Passages[0].Text, "hangar 9")
	})
	if _, err := read(t, c, alice, map[string]any{"ref": old.Ref}); codeOf(err) != legate.CodeNotFound {
		t.Errorf("the changed passage's old ref: %v, want NOT_FOUND", err)
	}
	if doc, err := read(t, c, alice, map[string]any{"ref": old.Document}); err != nil || !strings.Contains(doc.Text, "hangar 9") {
		t.Errorf("the document's ref reads its new text: %v %q", err, doc.Text)
	}
	// A new folder, and a file in it.
	sub := filepath.Join(dir, "new-team", "runbooks")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(sub, "kite.txt")
	if err := os.WriteFile(q, []byte("Kite flying\n\nThe kite festival runs on the dunes every September.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "kite festival dunes", hasSource(q))
	// Removed.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "zeppelin hangar storm", not(hasSource(p)))
	if err := os.RemoveAll(filepath.Join(dir, "new-team")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "kite festival dunes", not(hasSource(q)))
	if _, err := read(t, c, alice, map[string]any{"ref": old.Document}); codeOf(err) != legate.CodeNotFound {
		t.Errorf("a removed document's ref: %v, want NOT_FOUND", err)
	}
}

// page is a page a test server serves, changed at will.
type page struct {
	mu          sync.Mutex
	contentType string
	body        []byte
	status      int
	gets        int
}

func (p *page) set(contentType string, body []byte, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.contentType, p.body, p.status = contentType, body, status
}

func (p *page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gets++
	if p.status != 0 && p.status != http.StatusOK {
		http.Error(w, "no", p.status)
		return
	}
	w.Header().Set("Content-Type", p.contentType)
	w.Write(p.body)
}

// TestURLsAreFetchedAndRefreshed: the configured pages (HTML, Markdown,
// PDF) are fetched through netguard, read by their content type, and
// fetched again every refresh_interval; a page that fails is reported and
// keeps its last version; a URL on loopback is refused without
// allow_private_networks.
func TestURLsAreFetchedAndRefreshed(t *testing.T) {
	html, md, pdf, gone := &page{}, &page{}, &page{}, &page{}
	html.set("text/html; charset=utf-8", []byte(`<html><head><title>Status page</title></head><body><h1>Status</h1><h2>Uptime target</h2><p>The API targets 99.95% monthly uptime, measured by the external prober.</p></body></html>`), 200)
	md.set("text/markdown", []byte("# Glossary\n\n## Tenant\n\nA tenant is one customer organisation with its own billing account.\n"), 200)
	pdf.set("application/pdf", buildPDF("Floor plan", [][]string{{"Floor plan", "", "The quiet room is on the third floor, next to the library."}}), 200)
	gone.set("", nil, http.StatusNotFound)
	mux := http.NewServeMux()
	mux.Handle("/status", html)
	mux.Handle("/glossary", md)
	mux.Handle("/floor-plan", pdf)
	mux.Handle("/gone", gone)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	urls := []string{srv.URL + "/status", srv.URL + "/glossary", srv.URL + "/floor-plan", srv.URL + "/gone"}
	config := "urls: [" + strings.Join(urls, ", ") + "]\nrefresh_interval: 1s\n"

	ct, _ := connectors.Lookup("kb")
	if _, err := connectors.Build(ct, "kb", yamlNode(t, config), "c"); err == nil || !strings.Contains(err.Error(), "c.config.urls[0]") {
		t.Fatalf("a loopback URL without allow_private_networks: %v", err)
	}
	c := build(t, "kb", config+"allow_private_networks: true\n")
	r := search(t, c, alice, "monthly uptime target", 5)
	if len(r.Passages) == 0 || r.Passages[0].Source != urls[0] || r.Passages[0].Title != "Status page" || strings.Join(r.Passages[0].Headings, "/") != "Status/Uptime target" {
		t.Fatalf("the HTML page: %+v", r.Passages)
	}
	if r := search(t, c, alice, "what is a tenant", 5); len(r.Passages) == 0 || r.Passages[0].Source != urls[1] {
		t.Errorf("the Markdown page: %+v", r.Passages)
	}
	if r := search(t, c, alice, "where is the quiet room", 5); len(r.Passages) == 0 || r.Passages[0].Source != urls[2] || r.Passages[0].Title != "Floor plan" {
		t.Errorf("the PDF: %+v", r.Passages)
	}
	if len(r.Problems) != 1 || r.Problems[0].Source != urls[3] || !strings.Contains(r.Problems[0].Problem, "404") {
		t.Errorf("problems %+v, want the 404 of /gone", r.Problems)
	}
	// Changed: fetched again on schedule.
	html.set("text/html", []byte(`<html><head><title>Status page</title></head><body><h1>Status</h1><h2>Uptime target</h2><p>The API targets 99.99% monthly uptime since the migration.</p></body></html>`), 200)
	waitFor(t, c, "uptime since the migration", func(r kb.SearchResult) bool {
		return len(r.Passages) > 0 && strings.Contains(r.Passages[0].Text, "99.99%")
	})
	// Failing now: the last version stays, the failure is reported.
	md.set("", nil, http.StatusInternalServerError)
	r = waitFor(t, c, "what is a tenant", func(r kb.SearchResult) bool {
		for _, p := range r.Problems {
			if p.Source == urls[1] {
				return true
			}
		}
		return false
	})
	if len(r.Passages) == 0 || r.Passages[0].Source != urls[1] {
		t.Errorf("a page that fails lost its last version: %+v", r.Passages)
	}
}

// TestTestReportsSources: the connection test builds the index, says
// what it holds, and fails naming a folder it cannot read.
func TestTestReportsSources(t *testing.T) {
	var lines []string
	ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
	c := build(t, "kb", folderConfig(corpus(t)))
	if err := c.Test(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0] != "indexed 9 documents, 39 passages" {
		t.Errorf("reported %q", lines)
	}
	missing := filepath.Join(t.TempDir(), "nowhere")
	c = build(t, "kb", folderConfig(missing))
	err := c.Test(context.Background(), nil)
	if codeOf(err) != legate.CodeConfigError || !strings.Contains(err.Error(), missing+": cannot be read: no such file or directory") {
		t.Errorf("a missing folder: %v", err)
	}
}

// TestBuildOutlivesTheCall: a first call that ends before the index is
// built fails with TIMEOUT, saying so, and the build goes on: a later call
// finds it built.
func TestBuildOutlivesTheCall(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Slow page\n\nThe slow page arrived at last.\n"))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	c := build(t, "kb", "urls: ["+srv.URL+"/slow.txt]\nallow_private_networks: true\n")
	var tool connectors.Tool
	for _, tl := range c.Tools() {
		if tl.Name == "search" {
			tool = tl
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the call is over before the page arrives
	_, err := tool.Run(ctx, &connectors.Call{Tool: "search", Args: []byte(`{"query":"slow page"}`), Caller: connectors.Caller{Tenant: "acme"}})
	if err == nil || !strings.Contains(err.Error(), "the index is still being built") {
		t.Fatalf("a call ending before the build: %v", err)
	}
	close(release)
	if r := search(t, c, alice, "slow page arrived", 5); len(r.Passages) != 1 || r.Passages[0].Title != "Slow page" {
		t.Errorf("after the build: %+v", r)
	}
}
