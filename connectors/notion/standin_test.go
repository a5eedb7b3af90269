package notion_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

const (
	token   = "ntn_canary5d2e8f1a9c3b"
	version = "2022-06-28"
	// The OAuth integration the stand-in's OAuth endpoints know.
	standinClientID     = "standin-integration"
	standinClientSecret = "secret_standin9c3b"
)

// page is a page of the stand-in: under a page, or a row of a database.
type page struct {
	id, title        string
	parentKind       string // "page_id", "database_id", "workspace"
	parentID         string
	props            map[string]any // other properties, as Notion gives them
	created, edited  time.Time
	seq              int // edit order
	databaseTitleKey string
}

type database struct {
	id, title string
	parentID  string
	props     map[string]string // name → type
	created   time.Time
	seq       int
}

type block struct {
	id, typ, text, color string
	checked              bool
	created              time.Time
}

// standin is the Notion API on httptest, on its real paths: it checks
// Authorization and Notion-Version, pages by start_cursor and page_size
// (has_more, next_cursor: the id of the next result), and answers errors
// as Notion does ({"object":"error","status","code","message"}).
//
// Its OAuth endpoints (oauth, under /v1/oauth/: authorize, token, revoke)
// issue tokens per test user; an API call is answered with token or a
// valid token the OAuth endpoints issued, and oauth records the token of
// each call, in order.
type standin struct {
	srv   *httptest.Server
	oauth *oauthtest.Provider

	mu        sync.Mutex
	pages     map[string]*page
	databases map[string]*database
	children  map[string][]*block // by parent page or block id
	seq       int
	ids       int
	writes    int // pages created and appends performed
	calls     map[string]int
	versions  map[string]bool // Notion-Version values seen
	// fault may answer a request first: op is e.g. "search", "query".
	fault func(op string, n int, w http.ResponseWriter, r *http.Request) bool
	// afterWrite may answer in place of a success, after the write; label
	// is the page's title or the block's text.
	afterWrite func(label string, w http.ResponseWriter, r *http.Request) bool
}

func newStandin(t testing.TB) *standin {
	t.Helper()
	s := &standin{pages: map[string]*page{}, databases: map[string]*database{}, children: map[string][]*block{},
		calls: map[string]int{}, versions: map[string]bool{},
		oauth: oauthtest.New(standinClientID, standinClientSecret, "ntn_")}
	mux := http.NewServeMux()
	s.oauth.Mount(func(p string, h http.HandlerFunc) { mux.HandleFunc(p, h) }, "/v1/oauth")
	mux.HandleFunc("GET /v1/users/me", s.wrap("me", s.me))
	mux.HandleFunc("POST /v1/search", s.wrap("search", s.search))
	mux.HandleFunc("POST /v1/databases/{id}/query", s.wrap("query", s.query))
	mux.HandleFunc("GET /v1/databases/{id}", s.wrap("get_database", s.getDatabase))
	mux.HandleFunc("POST /v1/pages", s.wrap("create", s.createPage))
	mux.HandleFunc("GET /v1/pages/{id}", s.wrap("get_page", s.getPage))
	mux.HandleFunc("GET /v1/blocks/{id}/children", s.wrap("children", s.listChildren))
	mux.HandleFunc("PATCH /v1/blocks/{id}/children", s.wrap("append", s.appendChildren))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, 400, "invalid_request_url", "Invalid request URL.")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"object": "error", "status": status, "code": code, "message": msg})
}

func (s *standin) wrap(op string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[op]++
		n := s.calls[op]
		s.versions[r.Header.Get("Notion-Version")] = true
		fault := s.fault
		s.mu.Unlock()
		if fault != nil && fault(op, n, w, r) {
			return
		}
		if _, issued := s.oauth.Bearer(r); !issued && r.Header.Get("Authorization") != "Bearer "+token {
			fail(w, 401, "unauthorized", "API token is invalid.")
			return
		}
		if v := r.Header.Get("Notion-Version"); v == "" {
			fail(w, 400, "missing_version", "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		h(w, r)
	}
}

func (s *standin) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

func (s *standin) writeCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// newID is a Notion-like id: a UUID with dashes.
func (s *standin) newID() string {
	s.ids++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", s.ids)
}

func (s *standin) now() time.Time {
	s.seq++
	return time.Now().UTC().Truncate(time.Millisecond)
}

// addPage adds a page under a page (kind "page_id"), a database
// ("database_id") or the workspace.
func (s *standin) addPage(kind, parent, title string, props map[string]any) *page {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addPageLocked(kind, parent, title, props)
}

func (s *standin) addPageLocked(kind, parent, title string, props map[string]any) *page {
	p := &page{id: s.newID(), title: title, parentKind: kind, parentID: parent, props: props, created: s.now()}
	p.edited, p.seq = p.created, s.seq
	if db, ok := s.databases[parent]; ok {
		for name, typ := range db.props {
			if typ == "title" {
				p.databaseTitleKey = name
			}
		}
	}
	s.pages[p.id] = p
	if kind == "page_id" {
		s.children[parent] = append(s.children[parent], &block{id: p.id, typ: "child_page", text: title, created: p.created})
	}
	return p
}

func (s *standin) addDatabase(parent, title string, props map[string]string) *database {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &database{id: s.newID(), title: title, parentID: parent, props: props, created: s.now()}
	d.seq = s.seq
	s.databases[d.id] = d
	return d
}

func richJSON(text string) []any {
	if text == "" {
		return []any{}
	}
	return []any{map[string]any{"type": "text", "text": map[string]any{"content": text, "link": nil},
		"annotations": map[string]any{"bold": false, "italic": false, "strikethrough": false, "underline": false, "code": false, "color": "default"},
		"plain_text":  text, "href": nil}}
}

func (s *standin) pageJSON(p *page) map[string]any {
	titleKey := "title"
	if p.databaseTitleKey != "" {
		titleKey = p.databaseTitleKey
	}
	props := map[string]any{titleKey: map[string]any{"id": "title", "type": "title", "title": richJSON(p.title)}}
	for k, v := range p.props {
		props[k] = v
	}
	parent := map[string]any{"type": p.parentKind}
	if p.parentKind == "workspace" {
		parent["workspace"] = true
	} else {
		parent[p.parentKind] = p.parentID
	}
	return map[string]any{
		"object": "page", "id": p.id, "created_time": p.created.Format(time.RFC3339Nano), "last_edited_time": p.edited.Format(time.RFC3339Nano),
		"created_by": map[string]any{"object": "user", "id": "bot-1"}, "last_edited_by": map[string]any{"object": "user", "id": "bot-1"},
		"cover": nil, "icon": nil, "parent": parent, "archived": false, "in_trash": false, "properties": props,
		"url": "https://www.notion.so/" + strings.ReplaceAll(p.id, "-", ""), "public_url": nil,
	}
}

func (s *standin) databaseJSON(d *database) map[string]any {
	props := map[string]any{}
	for name, typ := range d.props {
		props[name] = map[string]any{"id": name, "name": name, "type": typ, typ: map[string]any{}}
	}
	return map[string]any{
		"object": "database", "id": d.id, "created_time": d.created.Format(time.RFC3339Nano), "last_edited_time": d.created.Format(time.RFC3339Nano),
		"title": richJSON(d.title), "description": []any{}, "is_inline": false, "archived": false,
		"parent": map[string]any{"type": "page_id", "page_id": d.parentID}, "properties": props,
		"url": "https://www.notion.so/" + strings.ReplaceAll(d.id, "-", ""), "public_url": nil,
	}
}

func blockJSON(b *block) map[string]any {
	out := map[string]any{"object": "block", "id": b.id, "type": b.typ, "created_time": b.created.Format(time.RFC3339Nano),
		"last_edited_time": b.created.Format(time.RFC3339Nano), "has_children": false, "archived": false, "in_trash": false}
	switch b.typ {
	case "child_page":
		out[b.typ] = map[string]any{"title": b.text}
	case "to_do":
		out[b.typ] = map[string]any{"rich_text": richJSON(b.text), "checked": b.checked, "color": b.color}
	case "code":
		out[b.typ] = map[string]any{"rich_text": richJSON(b.text), "caption": []any{}, "language": "plain text"}
	default:
		out[b.typ] = map[string]any{"rich_text": richJSON(b.text), "color": b.color}
	}
	return out
}

// paginate answers a list with start_cursor and page_size.
func paginate(w http.ResponseWriter, all []any, ids []string, cursor string, size int) {
	if size <= 0 || size > 100 {
		size = 100
	}
	start := 0
	if cursor != "" {
		start = slices.Index(ids, cursor)
		if start < 0 {
			fail(w, 400, "validation_error", "body failed validation: start_cursor should be a valid cursor.")
			return
		}
	}
	end := min(start+size, len(all))
	out := map[string]any{"object": "list", "results": all[start:end], "has_more": end < len(all), "next_cursor": nil, "type": "page_or_database"}
	if end < len(all) {
		out["next_cursor"] = ids[end]
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) me(w http.ResponseWriter, r *http.Request) {
	json.NewEncoder(w).Encode(map[string]any{"object": "user", "id": "bot-1", "name": "Legate", "type": "bot",
		"bot": map[string]any{"owner": map[string]any{"type": "workspace", "workspace": true}, "workspace_name": "Acme"}})
}

func (s *standin) search(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query  string `json:"query"`
		Filter *struct {
			Value    string `json:"value"`
			Property string `json:"property"`
		} `json:"filter"`
		StartCursor string `json:"start_cursor"`
		PageSize    int    `json:"page_size"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "invalid_json", "Error parsing JSON body.")
		return
	}
	if req.Filter != nil && (req.Filter.Property != "object" || (req.Filter.Value != "page" && req.Filter.Value != "database")) {
		fail(w, 400, "validation_error", "body failed validation: body.filter.value should be `\"page\"` or `\"database\"`.")
		return
	}
	s.mu.Lock()
	type hit struct {
		seq int
		id  string
		v   any
	}
	var hits []hit
	match := func(title string) bool { return strings.Contains(strings.ToLower(title), strings.ToLower(req.Query)) }
	if req.Filter == nil || req.Filter.Value == "page" {
		for _, p := range s.pages {
			if match(p.title) {
				hits = append(hits, hit{p.seq, p.id, s.pageJSON(p)})
			}
		}
	}
	if req.Filter == nil || req.Filter.Value == "database" {
		for _, d := range s.databases {
			if match(d.title) {
				hits = append(hits, hit{d.seq, d.id, s.databaseJSON(d)})
			}
		}
	}
	s.mu.Unlock()
	slices.SortFunc(hits, func(a, b hit) int { return b.seq - a.seq }) // last edited first
	all, ids := make([]any, len(hits)), make([]string, len(hits))
	for i, h := range hits {
		all[i], ids[i] = h.v, h.id
	}
	paginate(w, all, ids, req.StartCursor, req.PageSize)
}

// queryFilter is the part of Notion's filter language the stand-in knows.
type queryFilter struct {
	And       []queryFilter              `json:"and"`
	Property  string                     `json:"property"`
	RichText  *struct{ Contains string } `json:"rich_text"`
	Timestamp string                     `json:"timestamp"`
	Created   *struct {
		OnOrAfter string `json:"on_or_after"`
	} `json:"created_time"`
	Edited *struct {
		OnOrAfter string `json:"on_or_after"`
	} `json:"last_edited_time"`
}

func (f *queryFilter) match(p *page) bool {
	for _, sub := range f.And {
		if !sub.match(p) {
			return false
		}
	}
	if f.RichText != nil && !strings.Contains(p.title, f.RichText.Contains) {
		return false
	}
	after := func(t time.Time, bound string) bool {
		b, err := time.Parse(time.RFC3339, bound)
		return err == nil && !t.Before(b)
	}
	if f.Created != nil && !after(p.created, f.Created.OnOrAfter) {
		return false
	}
	if f.Edited != nil && !after(p.edited, f.Edited.OnOrAfter) {
		return false
	}
	return true
}

func (s *standin) query(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Filter *queryFilter `json:"filter"`
		Sorts  []struct {
			Timestamp string `json:"timestamp"`
			Direction string `json:"direction"`
		} `json:"sorts"`
		StartCursor string `json:"start_cursor"`
		PageSize    int    `json:"page_size"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "invalid_json", "Error parsing JSON body.")
		return
	}
	s.mu.Lock()
	if _, ok := s.databases[r.PathValue("id")]; !ok {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find database with ID: "+r.PathValue("id")+".")
		return
	}
	var rows []*page
	for _, p := range s.pages {
		if p.parentID == r.PathValue("id") && (req.Filter == nil || req.Filter.match(p)) {
			rows = append(rows, p)
		}
	}
	slices.SortFunc(rows, func(a, b *page) int { return b.seq - a.seq }) // newest first: the sorts asked
	all, ids := make([]any, len(rows)), make([]string, len(rows))
	for i, p := range rows {
		all[i], ids[i] = s.pageJSON(p), p.id
	}
	s.mu.Unlock()
	paginate(w, all, ids, req.StartCursor, req.PageSize)
}

// blocksOf returns the texts of the blocks under id.
func (s *standin) blocksOf(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.children[id] {
		out = append(out, b.typ+":"+b.text)
	}
	return out
}

// hangUp answers nothing and closes the connection: the answer is lost.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}
