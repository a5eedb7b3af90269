package google_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// doc is a document of the Docs stand-in: its body's structural
// elements as Docs writes them.
type doc struct {
	ID       string
	Title    string
	Revision int
	Content  []map[string]any
	Lists    map[string]any
}

func run(text string, style map[string]any) map[string]any {
	r := map[string]any{"content": text}
	if style != nil {
		r["textStyle"] = style
	}
	return map[string]any{"textRun": r}
}

func para(style string, runs ...map[string]any) map[string]any {
	p := map[string]any{"elements": runs}
	if style != "" {
		p["paragraphStyle"] = map[string]any{"namedStyleType": style}
	}
	return map[string]any{"paragraph": p}
}

// runs are the text runs of d, in order, tables' cells included.
func (d *doc) runs() []map[string]any {
	var out []map[string]any
	var walk func(content []map[string]any)
	walk = func(content []map[string]any) {
		for _, e := range content {
			if p, ok := e["paragraph"].(map[string]any); ok {
				for _, pe := range p["elements"].([]map[string]any) {
					if r, ok := pe["textRun"].(map[string]any); ok {
						out = append(out, r)
					}
				}
			}
			if t, ok := e["table"].(map[string]any); ok {
				for _, row := range t["tableRows"].([]map[string]any) {
					for _, c := range row["tableCells"].([]map[string]any) {
						walk(c["content"].([]map[string]any))
					}
				}
			}
		}
	}
	walk(d.Content)
	return out
}

func (d *doc) text() string {
	var b strings.Builder
	for _, r := range d.runs() {
		b.WriteString(r["content"].(string))
	}
	return b.String()
}

// newDoc is an empty document, as Docs creates one.
func newDoc(id, title string) *doc {
	return &doc{ID: id, Title: title, Revision: 1, Content: []map[string]any{{"sectionBreak": map[string]any{}}, para("NORMAL_TEXT", run("\n", nil))}}
}

func (s *standin) mountDocs(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/documents/{id}", s.wrap("doc", s.getDoc))
	mux.HandleFunc("POST /v1/documents", s.wrap("doc_create", s.createDoc))
	mux.HandleFunc("POST /v1/documents/{idop}", s.wrap("doc_batch", s.batchDoc))
}

func (d *doc) json() map[string]any {
	out := map[string]any{"documentId": d.ID, "title": d.Title, "revisionId": fmt.Sprintf("rev-%d", d.Revision),
		"body": map[string]any{"content": d.Content}}
	if d.Lists != nil {
		out["lists"] = d.Lists
	}
	return out
}

func (s *standin) getDoc(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[r.PathValue("id")]
	if !ok {
		gerror(w, 404, "Requested entity was not found.", "notFound", "NOT_FOUND")
		return
	}
	json.NewEncoder(w).Encode(d.json())
}

func (s *standin) createDoc(w http.ResponseWriter, r *http.Request) {
	var in struct{ Title string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		gerror(w, 400, "Invalid JSON payload received.", "badRequest", "INVALID_ARGUMENT")
		return
	}
	s.mu.Lock()
	s.writes["doc"]++
	d := newDoc(fmt.Sprintf("doc-new-%d", s.writes["doc"]), in.Title)
	s.docs[d.ID] = d
	out := d.json()
	s.mu.Unlock()
	// A document is a Drive file too.
	s.addFile(file{ID: d.ID, Name: in.Title, MimeType: "application/vnd.google-apps.document", CreatedTime: now(),
		Owners: []owner{{EmailAddress: "me@example.com", Me: true}}, Parents: []string{"root"}})
	if s.afterWrite != nil && s.afterWrite("doc", w, r) {
		return
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) batchDoc(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutSuffix(r.PathValue("idop"), ":batchUpdate")
	var in struct {
		Requests []struct {
			InsertText *struct {
				Text                 string
				Location             *struct{ Index int }
				EndOfSegmentLocation *struct{}
			}
			ReplaceAllText *struct {
				ContainsText struct {
					Text      string
					MatchCase bool
				}
				ReplaceText string
			}
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&in); !ok || err != nil {
		gerror(w, 400, "Invalid JSON payload received.", "badRequest", "INVALID_ARGUMENT")
		return
	}
	s.mu.Lock()
	d, found := s.docs[id]
	if !found {
		s.mu.Unlock()
		gerror(w, 404, "Requested entity was not found.", "notFound", "NOT_FOUND")
		return
	}
	var replies []map[string]any
	for _, req := range in.Requests {
		runs := d.runs()
		switch {
		case req.InsertText != nil && req.InsertText.Location != nil && req.InsertText.Location.Index == 1:
			runs[0]["content"] = req.InsertText.Text + runs[0]["content"].(string)
			replies = append(replies, map[string]any{})
		case req.InsertText != nil && req.InsertText.EndOfSegmentLocation != nil:
			last := runs[len(runs)-1]
			last["content"] = strings.TrimSuffix(last["content"].(string), "\n") + req.InsertText.Text + "\n"
			replies = append(replies, map[string]any{})
		case req.ReplaceAllText != nil:
			n := 0
			find := req.ReplaceAllText.ContainsText
			for _, r := range runs {
				c := r["content"].(string)
				if find.MatchCase {
					n += strings.Count(c, find.Text)
					r["content"] = strings.ReplaceAll(c, find.Text, req.ReplaceAllText.ReplaceText)
				} else {
					lower := strings.ToLower(c)
					n += strings.Count(lower, strings.ToLower(find.Text))
					for i := strings.Index(strings.ToLower(c), strings.ToLower(find.Text)); i >= 0; i = strings.Index(strings.ToLower(c), strings.ToLower(find.Text)) {
						c = c[:i] + req.ReplaceAllText.ReplaceText + c[i+len(find.Text):]
					}
					r["content"] = c
				}
			}
			replies = append(replies, map[string]any{"replaceAllText": map[string]any{"occurrencesChanged": n}})
		default:
			s.mu.Unlock()
			gerror(w, 400, "Invalid requests[0]: unsupported by the stand-in", "badRequest", "INVALID_ARGUMENT")
			return
		}
	}
	d.Revision++
	s.writes["docedit"]++
	rev := d.Revision
	s.mu.Unlock()
	if s.afterWrite != nil && s.afterWrite("docedit", w, r) {
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"documentId": id, "replies": replies,
		"writeControl": map[string]any{"requiredRevisionId": fmt.Sprintf("rev-%d", rev)}})
}

// seedDoc adds the document doc-1, "Plan", with a title, a heading,
// styled runs, a numbered and a bulleted list, and a table.
func (s *standin) seedDoc() {
	d := &doc{ID: "doc-1", Title: "Plan", Revision: 7, Lists: map[string]any{
		"num": map[string]any{"listProperties": map[string]any{"nestingLevels": []map[string]any{{"glyphType": "DECIMAL"}}}},
		"dot": map[string]any{"listProperties": map[string]any{"nestingLevels": []map[string]any{{"glyphSymbol": "●"}, {"glyphSymbol": "○"}}}},
	}}
	bullet := func(list string, level int, text string) map[string]any {
		p := para("NORMAL_TEXT", run(text+"\n", nil))
		b := map[string]any{"listId": list}
		if level > 0 {
			b["nestingLevel"] = level
		}
		p["paragraph"].(map[string]any)["bullet"] = b
		return p
	}
	cell := func(text string) map[string]any {
		return map[string]any{"content": []map[string]any{para("NORMAL_TEXT", run(text+"\n", nil))}}
	}
	d.Content = []map[string]any{
		{"sectionBreak": map[string]any{}},
		para("TITLE", run("Plan\n", nil)),
		para("HEADING_2", run("Goals\n", nil)),
		para("NORMAL_TEXT", run("Ship ", nil), run("fast", map[string]any{"bold": true}), run(" and ", nil),
			run("well", map[string]any{"italic": true}), run(", see ", nil), run("the board", map[string]any{"link": map[string]any{"url": "https://example.com/board"}}), run("\n", nil)),
		bullet("num", 0, "first"),
		bullet("num", 0, "second"),
		bullet("dot", 0, "a point"),
		bullet("dot", 1, "a sub-point"),
		{"table": map[string]any{"rows": 2, "columns": 2, "tableRows": []map[string]any{
			{"tableCells": []map[string]any{cell("Owner"), cell("Due")}},
			{"tableCells": []map[string]any{cell("Ada"), cell("May")}},
		}}},
	}
	s.mu.Lock()
	s.docs[d.ID] = d
	s.mu.Unlock()
	s.addFile(file{ID: d.ID, Name: d.Title, MimeType: "application/vnd.google-apps.document", CreatedTime: "2026-11-01T10:00:00.000Z",
		Owners: []owner{{EmailAddress: "me@example.com", Me: true}}, Parents: []string{"root"},
		Content: "# Plan\n\n## Goals\n\nShip **fast** and *well*.\n"})
}
