package kb_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/kb"
)

// TestPassagesKeepTheirHeadings: each kind of document is read into
// passages under its headings: Markdown's, HTML's heading elements, a text
// file's first line, a PDF's title and page; HTML's scripts are not text.
func TestPassagesKeepTheirHeadings(t *testing.T) {
	root := corpus(t)
	c := build(t, "kb", folderConfig(root))
	for _, tc := range []struct {
		query, file string
		title       string
		headings    []string
		text        string
	}{
		{"unused vacation days expire 31 March", "handbook/time-off.md", "Time off", []string{"Time off", "Vacation", "Carry-over"}, "Up to five unused vacation days"},
		{"UDP blocked hotel TCP fallback profile", "it/vpn.html", "VPN access", []string{"VPN access", "Troubleshooting"}, "switch to the TCP fallback profile"},
		{"restore drill scratch instance row counts", "engineering/backups.txt", "Database backups and restores", []string{"Database backups and restores"}, "restore drill"},
		{"fire wardens assembly point canal", "office/building-access.pdf", "Building access and fire safety", []string{"Building access and fire safety", "Page 2"}, "The assembly point is the car park across the canal."},
	} {
		r := search(t, c, alice, tc.query, 5)
		if len(r.Passages) == 0 {
			t.Fatalf("%q: nothing found", tc.query)
		}
		p := r.Passages[0]
		if p.Source != filepath.Join(root, tc.file) || p.Title != tc.title || !slices.Equal(p.Headings, tc.headings) || !strings.Contains(strings.Join(strings.Fields(p.Text), " "), tc.text) {
			t.Errorf("%q: first passage %s %q %q:\n%s\nwant %s %q %q with %q", tc.query, p.Source, p.Title, p.Headings, p.Text, tc.file, tc.title, tc.headings, tc.text)
		}
	}
	for _, p := range search(t, c, alice, "console.log analytics", 20).Passages {
		if strings.Contains(p.Text, "analytics") || strings.Contains(p.Text, "font-family") {
			t.Errorf("a script's or a style's text was indexed: %s: %q", p.Source, p.Text)
		}
	}
	if r := search(t, c, alice, "vacation", 5); r.Documents != 9 || r.Indexed < 30 || r.Ranking != "bm25" || len(r.Problems) != 0 {
		t.Errorf("indexed %d documents, %d passages, ranking %s, problems %v; want the 9 of the corpus, by bm25, none", r.Documents, r.Indexed, r.Ranking, r.Problems)
	}
}

// TestReadPagesADocument: kb.read gives a document in pages of at most
// max_chars characters, each starting at the last one's next_offset,
// which together are the whole text; a passage ref gives the passage
// whole; bounds out of range are refused.
func TestReadPagesADocument(t *testing.T) {
	root := corpus(t)
	c := build(t, "kb", folderConfig(root)+"max_read_chars: 500\nchunk_chars: 300\n")
	r := search(t, c, alice, "per diem meal allowance travelling", 5)
	p := r.Passages[0]
	if p.Source != filepath.Join(root, "handbook/expenses.md") {
		t.Fatalf("first passage from %s", p.Source)
	}
	// The passage, whole.
	got, err := read(t, c, alice, map[string]any{"ref": p.Ref})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != p.Text || got.Source != p.Source || !slices.Equal(got.Headings, p.Headings) || got.Document != p.Document || got.NextOffset != 0 || got.TotalChars != len([]rune(p.Text)) {
		t.Errorf("read of the passage: %+v, want its text %q and headings %q", got, p.Text, p.Headings)
	}
	// The document, in pages.
	var whole strings.Builder
	offset, pages := 0, 0
	for {
		page, err := read(t, c, alice, map[string]any{"ref": p.Document, "offset": offset, "max_chars": 400})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if n := len([]rune(page.Text)); n > 400 || page.Offset != offset {
			t.Fatalf("page at %d: %d characters from %d", offset, n, page.Offset)
		}
		whole.WriteString(page.Text)
		if page.NextOffset == 0 {
			if whole.Len() == 0 || len([]rune(whole.String())) != page.TotalChars {
				t.Errorf("pages hold %d characters, the document %d", len([]rune(whole.String())), page.TotalChars)
			}
			break
		}
		offset = page.NextOffset
	}
	doc, err := read(t, c, alice, map[string]any{"ref": p.Document})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 3 || len([]rune(doc.Text)) != 500 || doc.NextOffset != 500 || !strings.HasPrefix(whole.String(), "# Expenses and travel") || !strings.Contains(whole.String(), "0.30 EUR per kilometre") {
		t.Errorf("%d pages; a read without max_chars gave %d characters, next at %d; want max_read_chars, 500", pages, len([]rune(doc.Text)), doc.NextOffset)
	}
	for _, args := range []map[string]any{
		{"ref": p.Document, "max_chars": 501},
		{"ref": p.Document, "offset": -1},
		{"ref": p.Document, "offset": 1 << 20},
		{"ref": ""},
	} {
		if _, err := read(t, c, alice, args); codeOf(err) != legate.CodeInvalidArgument {
			t.Errorf("read %v: %v, want INVALID_ARGUMENT", args, err)
		}
	}
	for _, args := range []map[string]any{{"query": ""}, {"query": "x", "limit": 21}, {"query": strings.Repeat("x ", 600)}} {
		if _, err := run(t, c, alice, "search", args); codeOf(err) != legate.CodeInvalidArgument {
			t.Errorf("search %v: %v, want INVALID_ARGUMENT", args, err)
		}
	}
}

// TestRefsAreSignedAndStable: a ref reads on another replica (an instance
// of the same config and key), and nowhere else: altered, of another
// tenant, signed with another instance's key, or naming a passage that
// has changed since, it is NOT_FOUND.
func TestRefsAreSignedAndStable(t *testing.T) {
	root := corpus(t)
	a := build(t, "kb", folderConfig(root))
	b := build(t, "kb", folderConfig(root))
	ra := search(t, a, alice, "who approves expense reports above 1,000 EUR", 5)
	rb := search(t, b, alice, "who approves expense reports above 1,000 EUR", 5)
	if len(ra.Passages) == 0 || !slices.EqualFunc(ra.Passages, rb.Passages, func(x, y kb.Passage) bool { return x.Ref == y.Ref && x.Document == y.Document }) {
		t.Fatalf("two replicas ranked or signed differently:\n%+v\n%+v", ra.Passages, rb.Passages)
	}
	p := ra.Passages[0]
	if got, err := read(t, b, alice, map[string]any{"ref": p.Ref}); err != nil || got.Text != p.Text {
		t.Fatalf("replica b reads replica a's ref: %v %q", err, got.Text)
	}
	altered := []byte(p.Ref)
	altered[len(altered)/2] ^= 1
	bob := caller{tenant: "globex", key: alice.key}
	other := caller{tenant: alice.tenant, key: []byte("the key of another instance")}
	for name, tc := range map[string]struct {
		who caller
		ref string
	}{
		"altered":                 {alice, string(altered)},
		"another tenant":          {bob, p.Ref},
		"another instance's key":  {other, p.Ref},
		"a document as a passage": {alice, strings.Replace(p.Document, "kbdoc://", "kbpassage://", 1)},
		"not a ref":               {alice, "kbdoc://" + filepath.Join(root, "handbook/expenses.md")},
	} {
		if _, err := read(t, a, tc.who, map[string]any{"ref": tc.ref}); codeOf(err) != legate.CodeNotFound {
			t.Errorf("%s: %v, want NOT_FOUND", name, err)
		}
	}
}

// TestLimitsAreReported: documents past max_documents and files over
// max_document_bytes are skipped and listed as problems; hidden files and
// folders and files of other kinds are left alone.
func TestLimitsAreReported(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, corpus(t), dir)
	for name, body := range map[string]string{
		".draft.md":           "# Draft\n\nsecret plans for the unicorn launch\n",
		".git/notes.md":       "# Notes\n\nunicorn repository internals\n",
		"notes.csv":           "unicorn,launch\n",
		"handbook/unicorn.md": "# Unicorn\n\nThe unicorn launch is public.\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := build(t, "kb", folderConfig(dir))
	r := search(t, c, alice, "unicorn launch", 5)
	if len(r.Passages) == 0 || r.Passages[0].Source != filepath.Join(dir, "handbook", "unicorn.md") || r.Documents != 10 {
		t.Errorf("%d documents, first passage %+v; want the corpus's 9 and unicorn.md", r.Documents, r.Passages)
	}
	for _, p := range r.Passages {
		if strings.Contains(p.Text, "unicorn") && p.Source != filepath.Join(dir, "handbook", "unicorn.md") {
			t.Errorf("a hidden or foreign file indexed: %s", p.Source)
		}
	}

	c = build(t, "kb", folderConfig(dir)+"max_documents: 3\nmax_document_bytes: 1400\n")
	r = search(t, c, alice, "unicorn launch", 5)
	skipped, big := 0, 0
	for _, p := range r.Problems {
		switch {
		case p.Problem == "skipped: max_documents reached":
			skipped++
		case strings.HasPrefix(p.Problem, "skipped: ") && strings.Contains(p.Problem, "bytes, over max_document_bytes (1400)"):
			big++
		default:
			t.Errorf("problem %s: %s", p.Source, p.Problem)
		}
	}
	if r.Documents != 3 || skipped == 0 || big == 0 || r.Documents+skipped+big != 10 {
		t.Errorf("%d documents indexed, %d skipped past max_documents, %d over max_document_bytes; want 3 and the other 7 reported", r.Documents, skipped, big)
	}
	if err := c.Test(t.Context(), nil); codeOf(err) != legate.CodeConfigError || !strings.Contains(err.Error(), "max_documents reached") {
		t.Errorf("Test with sources skipped: %v", err)
	}
}
