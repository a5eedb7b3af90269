package notion_test

import (
	"bytes"
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
	version = "2025-09-03"
	// The OAuth integration the stand-in's OAuth endpoints know.
	standinClientID     = "standin-integration"
	standinClientSecret = "secret_standin9c3b"
)

// page is a page of the stand-in: under a page, or a row of a data
// source.
type page struct {
	id, title        string
	parentKind       string // "page_id", "data_source_id", "workspace"
	parentID         string
	props            map[string]any // other properties, as Notion gives them
	created, edited  time.Time
	seq              int // edit order
	databaseTitleKey string
	inTrash          bool
}

// database is a data source of the stand-in; dbID is the database
// holding it (Notion API 2025-09-03: a database holds data sources).
type database struct {
	id, title string
	dbID      string
	parentID  string            // the page holding the database
	props     map[string]string // name → type
	options   map[string][]string
	created   time.Time
	seq       int
}

type block struct {
	id, typ, text, color, language string
	checked                        bool
	created                        time.Time
	createdBy                      string
}

type comment struct {
	id, discussion, parent, text, createdBy string
	created                                 time.Time
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
	databases map[string]*database   // data sources, by id
	holders   map[string][]*database // the data sources of each database, by its id
	children  map[string][]*block    // by parent page or block id
	comments  []*comment
	users     []map[string]any
	// version is the Notion-Version the stand-in answers; any other is
	// refused as Notion refuses a request for another shape.
	version  string
	seq      int
	ids      int
	writes   int // pages created and appends performed
	calls    map[string]int
	versions map[string]bool // Notion-Version values seen
	// fault may answer a request first: op is e.g. "search", "query".
	fault func(op string, n int, w http.ResponseWriter, r *http.Request) bool
	// afterWrite may answer in place of a success, after the write; label
	// is the page's title or the block's text.
	afterWrite func(label string, w http.ResponseWriter, r *http.Request) bool
	// record, when set, gets every answer: the route, status and body.
	record func(route string, status int, body []byte)
}

// recorder keeps an answer's status and body for standin.record.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController hang up through the recorder.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func newStandin(t testing.TB) *standin {
	t.Helper()
	s := &standin{pages: map[string]*page{}, databases: map[string]*database{}, holders: map[string][]*database{},
		children: map[string][]*block{}, calls: map[string]int{}, versions: map[string]bool{}, version: version,
		oauth: oauthtest.New(standinClientID, standinClientSecret, "ntn_")}
	mux := http.NewServeMux()
	s.oauth.Mount(func(p string, h http.HandlerFunc) { mux.HandleFunc(p, h) }, "/v1/oauth")
	mux.HandleFunc("GET /v1/users/me", s.wrap("me", s.me))
	mux.HandleFunc("GET /v1/users", s.wrap("users", s.listUsers))
	mux.HandleFunc("GET /v1/users/{id}", s.wrap("get_user", s.getUser))
	mux.HandleFunc("POST /v1/search", s.wrap("search", s.search))
	mux.HandleFunc("POST /v1/data_sources/{id}/query", s.wrap("query", s.query))
	mux.HandleFunc("GET /v1/data_sources/{id}", s.wrap("get_data_source", s.getDataSource))
	mux.HandleFunc("GET /v1/databases/{id}", s.wrap("get_database", s.getDatabase))
	mux.HandleFunc("POST /v1/pages", s.wrap("create", s.createPage))
	mux.HandleFunc("GET /v1/pages/{id}", s.wrap("get_page", s.getPage))
	mux.HandleFunc("PATCH /v1/pages/{id}", s.wrap("update", s.updatePage))
	mux.HandleFunc("POST /v1/pages/{id}/move", s.wrap("move", s.movePage))
	mux.HandleFunc("GET /v1/blocks/{id}/children", s.wrap("children", s.listChildren))
	mux.HandleFunc("PATCH /v1/blocks/{id}/children", s.wrap("append", s.appendChildren))
	mux.HandleFunc("GET /v1/comments", s.wrap("comments", s.listComments))
	mux.HandleFunc("POST /v1/comments", s.wrap("comment", s.addComment))
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
		if s.record != nil {
			rec := &recorder{ResponseWriter: w, status: 200}
			defer func() { s.record(r.Pattern, rec.status, rec.body.Bytes()) }()
			w = rec
		}
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
		} else if v != s.version {
			fail(w, 400, "validation_error", "the stand-in answers Notion-Version "+s.version+", not "+v+".")
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
		s.children[parent] = append(s.children[parent], &block{id: p.id, typ: "child_page", text: title, created: p.created, createdBy: botID})
	}
	return p
}

// addDatabase adds a database under page parent holding one data source
// of props, and returns the data source.
func (s *standin) addDatabase(parent, title string, props map[string]string) *database {
	s.mu.Lock()
	defer s.mu.Unlock()
	dbID := s.newID()
	return s.addSourceLocked(dbID, parent, title, props)
}

// addSource adds a data source to the database holding d.
func (s *standin) addSource(d *database, title string, props map[string]string) *database {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addSourceLocked(d.dbID, d.parentID, title, props)
}

func (s *standin) addSourceLocked(dbID, parent, title string, props map[string]string) *database {
	d := &database{id: s.newID(), dbID: dbID, title: title, parentID: parent, props: props, created: s.now(), options: map[string][]string{}}
	d.seq = s.seq
	s.databases[d.id] = d
	s.holders[dbID] = append(s.holders[dbID], d)
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
	if d, ok := s.databases[p.parentID]; ok {
		parent["database_id"] = d.dbID
	}
	return map[string]any{
		"object": "page", "id": p.id, "created_time": p.created.Format(time.RFC3339Nano), "last_edited_time": p.edited.Format(time.RFC3339Nano),
		"created_by": map[string]any{"object": "user", "id": botID}, "last_edited_by": map[string]any{"object": "user", "id": botID},
		"cover": nil, "icon": nil, "parent": parent, "archived": p.inTrash, "in_trash": p.inTrash, "is_locked": false, "properties": props,
		"url": "https://www.notion.so/" + strings.ReplaceAll(p.id, "-", ""), "public_url": nil,
	}
}

// dataSourceJSON is a data source as GET /v1/data_sources/{id} and
// search give it.
func (s *standin) dataSourceJSON(d *database) map[string]any {
	props := map[string]any{}
	for name, typ := range d.props {
		cfg := map[string]any{}
		if opts, ok := d.options[name]; ok {
			list := []any{}
			for _, o := range opts {
				list = append(list, map[string]any{"id": o, "name": o, "color": "default"})
			}
			cfg["options"] = list
		}
		props[name] = map[string]any{"id": name, "name": name, "type": typ, typ: cfg}
	}
	return map[string]any{
		"object": "data_source", "id": d.id, "created_time": d.created.Format(time.RFC3339Nano), "last_edited_time": d.created.Format(time.RFC3339Nano),
		"created_by": map[string]any{"object": "user", "id": botID}, "last_edited_by": map[string]any{"object": "user", "id": botID},
		"title": richJSON(d.title), "description": []any{}, "archived": false, "in_trash": false, "is_inline": false, "icon": nil, "cover": nil,
		"parent":          map[string]any{"type": "database_id", "database_id": d.dbID},
		"database_parent": map[string]any{"type": "page_id", "page_id": d.parentID}, "properties": props,
		"url": "https://www.notion.so/" + strings.ReplaceAll(d.dbID, "-", ""), "public_url": nil,
	}
}

// databaseJSON is a database as GET /v1/databases/{id} gives it.
func (s *standin) databaseJSON(dbID string) map[string]any {
	sources := s.holders[dbID]
	list := []any{}
	for _, d := range sources {
		list = append(list, map[string]any{"id": d.id, "name": d.title})
	}
	first := sources[0]
	return map[string]any{
		"object": "database", "id": dbID, "created_time": first.created.Format(time.RFC3339Nano), "last_edited_time": first.created.Format(time.RFC3339Nano),
		"title": richJSON(first.title), "description": []any{}, "is_inline": false, "in_trash": false, "is_locked": false,
		"parent": map[string]any{"type": "page_id", "page_id": first.parentID}, "data_sources": list, "icon": nil, "cover": nil,
		"url": "https://www.notion.so/" + strings.ReplaceAll(dbID, "-", ""), "public_url": nil,
	}
}

func blockJSON(b *block, hasChildren bool) map[string]any {
	by := b.createdBy
	if by == "" {
		by = "user-1"
	}
	out := map[string]any{"object": "block", "id": b.id, "type": b.typ, "created_time": b.created.Format(time.RFC3339Nano),
		"last_edited_time": b.created.Format(time.RFC3339Nano), "has_children": hasChildren, "archived": false, "in_trash": false,
		"created_by": map[string]any{"object": "user", "id": by}, "last_edited_by": map[string]any{"object": "user", "id": by},
		"parent": map[string]any{"type": "page_id", "page_id": "00000000-0000-4000-8000-000000000000"}}
	switch b.typ {
	case "child_page":
		out[b.typ] = map[string]any{"title": b.text}
	case "to_do":
		out[b.typ] = map[string]any{"rich_text": richJSON(b.text), "checked": b.checked, "color": b.color}
	case "code":
		out[b.typ] = map[string]any{"rich_text": richJSON(b.text), "caption": []any{}, "language": b.language}
	case "divider":
		out[b.typ] = map[string]any{}
	default:
		out[b.typ] = map[string]any{"rich_text": richJSON(b.text), "color": b.color}
	}
	return out
}

// paginate answers a list with start_cursor and page_size.
func paginate(w http.ResponseWriter, typ string, all []any, ids []string, cursor string, size int) {
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
	out := map[string]any{"object": "list", "results": all[start:end], "has_more": end < len(all), "next_cursor": nil, "type": typ, typ: map[string]any{}}
	if end < len(all) {
		out["next_cursor"] = ids[end]
	}
	json.NewEncoder(w).Encode(out)
}

// botID is the id of the integration's bot user.
const botID = "b0700000-0000-4000-8000-000000000001"

func (s *standin) me(w http.ResponseWriter, r *http.Request) {
	json.NewEncoder(w).Encode(map[string]any{"object": "user", "id": botID, "name": "Legate", "type": "bot", "avatar_url": nil,
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
	if req.Filter != nil && (req.Filter.Property != "object" || (req.Filter.Value != "page" && req.Filter.Value != "data_source")) {
		fail(w, 400, "validation_error", "body failed validation: body.filter.value should be `\"page\"` or `\"data_source\"`.")
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
			if match(p.title) && !p.inTrash {
				hits = append(hits, hit{p.seq, p.id, s.pageJSON(p)})
			}
		}
	}
	if req.Filter == nil || req.Filter.Value == "data_source" {
		for _, d := range s.databases {
			if match(d.title) {
				hits = append(hits, hit{d.seq, d.id, s.dataSourceJSON(d)})
			}
		}
	}
	s.mu.Unlock()
	slices.SortFunc(hits, func(a, b hit) int { return b.seq - a.seq }) // last edited first
	all, ids := make([]any, len(hits)), make([]string, len(hits))
	for i, h := range hits {
		all[i], ids[i] = h.v, h.id
	}
	paginate(w, "page_or_data_source", all, ids, req.StartCursor, req.PageSize)
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
