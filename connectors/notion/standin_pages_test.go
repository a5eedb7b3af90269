package notion_test

// The stand-in's endpoints that read and write pages and blocks.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// parseBlocks reads blocks as a request gives them.
func parseBlocks(raw []map[string]any, now time.Time, newID func() string) ([]*block, bool) {
	var out []*block
	for _, m := range raw {
		typ, _ := m["type"].(string)
		body, ok := m[typ].(map[string]any)
		if !ok {
			return nil, false
		}
		b := &block{id: newID(), typ: typ, color: "default", created: now, createdBy: botID}
		if c, ok := body["color"].(string); ok {
			b.color = c
		}
		if typ == "code" {
			if b.language, ok = body["language"].(string); !ok {
				return nil, false
			}
		}
		b.checked, _ = body["checked"].(bool)
		rt, _ := body["rich_text"].([]any)
		for _, run := range rt {
			text, _ := run.(map[string]any)["text"].(map[string]any)
			content, _ := text["content"].(string)
			if len([]rune(content)) > 2000 {
				return nil, false
			}
			b.text += content
		}
		out = append(out, b)
	}
	return out, true
}

func (s *standin) createPage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Parent     map[string]any            `json:"parent"`
		Properties map[string]map[string]any `json:"properties"`
		Children   []map[string]any          `json:"children"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "invalid_json", "Error parsing JSON body.")
		return
	}
	s.mu.Lock()
	kind, parent := "", ""
	for _, k := range []string{"page_id", "data_source_id"} {
		if id, ok := req.Parent[k].(string); ok {
			kind, parent = k, id
		}
	}
	_, isPage := s.pages[parent]
	_, isDB := s.databases[parent]
	if _, old := req.Parent["database_id"]; old {
		s.mu.Unlock()
		fail(w, 400, "validation_error", "body failed validation: a database with several data sources takes parent.data_source_id; this stand-in, as Notion 2025-09-03, wants data_source_id.")
		return
	}
	if (kind == "page_id" && !isPage) || (kind == "data_source_id" && !isDB) || kind == "" {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find parent with ID: "+parent+".")
		return
	}
	title, props, bad := s.readProps(parent, req.Properties)
	if bad != "" {
		s.mu.Unlock()
		fail(w, 400, "validation_error", bad)
		return
	}
	if title == nil {
		title = new(string)
	}
	if len(req.Children) > 100 {
		s.mu.Unlock()
		fail(w, 400, "validation_error", "body failed validation: body.children.length should be ≤ `100`.")
		return
	}
	p := s.addPageLocked(kind, parent, *title, props)
	blocks, ok := parseBlocks(req.Children, p.created, s.newID)
	if !ok {
		delete(s.pages, p.id)
		s.mu.Unlock()
		fail(w, 400, "validation_error", "body failed validation: a child block is not valid.")
		return
	}
	s.children[p.id] = blocks
	s.writes++
	out, after := s.pageJSON(p), s.afterWrite
	s.mu.Unlock()
	if after != nil && after(*title, w, r) {
		return
	}
	json.NewEncoder(w).Encode(out)
}

// readProps reads the properties of a request to create or update a page
// in data source ds (none for a page under a page): the title, when set,
// and the others as the stand-in stores them; bad says what is wrong
// (s.mu held).
func (s *standin) readProps(ds string, in map[string]map[string]any) (title *string, props map[string]any, bad string) {
	d, isDB := s.databases[ds]
	props = map[string]any{}
	for name, v := range in {
		if rt, ok := v["title"].([]any); ok && (name == "title" || isDB && d.props[name] == "title") {
			t := ""
			for _, run := range rt {
				text, _ := run.(map[string]any)["text"].(map[string]any)
				c, _ := text["content"].(string)
				t += c
			}
			title = &t
			continue
		}
		typ := ""
		if isDB {
			typ = d.props[name]
		}
		if _, ok := v[typ]; !ok || typ == "" {
			return nil, nil, name + " is not a property that exists."
		}
		if opts, ok := d.options[name]; ok && typ != "multi_select" && !slices.Contains(opts, optionName(v[typ])) {
			return nil, nil, fmt.Sprintf("%s: option %q does not exist.", name, optionName(v[typ]))
		}
		props[name] = map[string]any{"id": name, "type": typ, typ: v[typ]}
	}
	return title, props, ""
}

func (s *standin) updatePage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Properties map[string]map[string]any `json:"properties"`
		InTrash    *bool                     `json:"in_trash"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "invalid_json", "Error parsing JSON body.")
		return
	}
	s.mu.Lock()
	p, ok := s.pages[r.PathValue("id")]
	if !ok {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find page with ID: "+r.PathValue("id")+".")
		return
	}
	title, props, bad := s.readProps(p.parentID, req.Properties)
	if bad != "" {
		s.mu.Unlock()
		fail(w, 400, "validation_error", bad)
		return
	}
	if title != nil {
		p.title = *title
	}
	for name, v := range props {
		if p.props == nil {
			p.props = map[string]any{}
		}
		p.props[name] = v
	}
	if req.InTrash != nil {
		p.inTrash = *req.InTrash
	}
	p.edited, p.seq = s.now(), s.seq
	s.writes++
	out, after := s.pageJSON(p), s.afterWrite
	s.mu.Unlock()
	if after != nil && after(p.id, w, r) {
		return
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) movePage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Parent map[string]string `json:"parent"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "invalid_json", "Error parsing JSON body.")
		return
	}
	s.mu.Lock()
	p, ok := s.pages[r.PathValue("id")]
	kind := req.Parent["type"]
	_, isPage := s.pages[req.Parent[kind]]
	_, isDB := s.databases[req.Parent[kind]]
	if !ok || !(kind == "page_id" && isPage || kind == "data_source_id" && isDB) {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find page or parent.")
		return
	}
	if old := s.children[p.parentID]; p.parentKind == "page_id" {
		s.children[p.parentID] = slices.DeleteFunc(old, func(b *block) bool { return b.id == p.id })
	}
	p.parentKind, p.parentID = kind, req.Parent[kind]
	if kind == "page_id" {
		s.children[p.parentID] = append(s.children[p.parentID], &block{id: p.id, typ: "child_page", text: p.title, created: p.created, createdBy: botID})
	}
	s.writes++
	out, after := s.pageJSON(p), s.afterWrite
	s.mu.Unlock()
	if after != nil && after(p.id, w, r) {
		return
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) getPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p, ok := s.pages[r.PathValue("id")]
	var out map[string]any
	if ok {
		out = s.pageJSON(p)
	}
	s.mu.Unlock()
	if !ok {
		fail(w, 404, "object_not_found", "Could not find page with ID: "+r.PathValue("id")+".")
		return
	}
	json.NewEncoder(w).Encode(out)
}

// parentExists reports whether id is a page or a block (s.mu held).
func (s *standin) parentExists(id string) bool {
	if _, ok := s.pages[id]; ok {
		return true
	}
	for _, bs := range s.children {
		for _, b := range bs {
			if b.id == id {
				return true
			}
		}
	}
	return false
}

func (s *standin) listChildren(w http.ResponseWriter, r *http.Request) {
	size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
	s.mu.Lock()
	if !s.parentExists(r.PathValue("id")) {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find block with ID: "+r.PathValue("id")+".")
		return
	}
	bs := s.children[r.PathValue("id")]
	all, ids := make([]any, len(bs)), make([]string, len(bs))
	for i, b := range bs {
		all[i], ids[i] = blockJSON(b, len(s.children[b.id]) > 0), b.id
	}
	s.mu.Unlock()
	paginate(w, "block", all, ids, r.URL.Query().Get("start_cursor"), size)
}

func (s *standin) appendChildren(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Children []map[string]any `json:"children"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "invalid_json", "Error parsing JSON body.")
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	if !s.parentExists(id) {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find block with ID: "+id+".")
		return
	}
	blocks, ok := parseBlocks(req.Children, s.now(), s.newID)
	if !ok || len(blocks) == 0 || len(blocks) > 100 {
		s.mu.Unlock()
		fail(w, 400, "validation_error", "body failed validation: body.children is not valid.")
		return
	}
	s.children[id] = append(s.children[id], blocks...)
	s.writes++
	results := make([]any, len(blocks))
	for i, b := range blocks {
		results[i] = blockJSON(b, false)
	}
	label, after := blocks[0].text, s.afterWrite
	s.mu.Unlock()
	if after != nil && after(label, w, r) {
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "results": results, "next_cursor": nil, "has_more": false, "type": "block", "block": map[string]any{}})
}
