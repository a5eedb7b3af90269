package notion_test

// The stand-in's endpoints that read and write pages and blocks.

import (
	"encoding/json"
	"net/http"
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
		b := &block{id: newID(), typ: typ, color: "default", created: now}
		if c, ok := body["color"].(string); ok {
			b.color = c
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
	for _, k := range []string{"page_id", "database_id"} {
		if id, ok := req.Parent[k].(string); ok {
			kind, parent = k, id
		}
	}
	_, isPage := s.pages[parent]
	_, isDB := s.databases[parent]
	if (kind == "page_id" && !isPage) || (kind == "database_id" && !isDB) || kind == "" {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find parent with ID: "+parent+".")
		return
	}
	title, props := "", map[string]any{}
	for name, v := range req.Properties {
		if rt, ok := v["title"].([]any); ok && (name == "title" || isDB && s.databases[parent].props[name] == "title") {
			for _, run := range rt {
				text, _ := run.(map[string]any)["text"].(map[string]any)
				c, _ := text["content"].(string)
				title += c
			}
			continue
		}
		typ := ""
		if isDB {
			typ = s.databases[parent].props[name]
		}
		if _, ok := v[typ]; !ok || typ == "" {
			s.mu.Unlock()
			fail(w, 400, "validation_error", name+" is not a property that exists.")
			return
		}
		props[name] = map[string]any{"id": name, "type": typ, typ: v[typ]}
	}
	if len(req.Children) > 100 {
		s.mu.Unlock()
		fail(w, 400, "validation_error", "body failed validation: body.children.length should be ≤ `100`.")
		return
	}
	p := s.addPageLocked(kind, parent, title, props)
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
	if after != nil && after(title, w, r) {
		return
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) getDatabase(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d, ok := s.databases[r.PathValue("id")]
	var out map[string]any
	if ok {
		out = s.databaseJSON(d)
	}
	s.mu.Unlock()
	if !ok {
		fail(w, 404, "object_not_found", "Could not find database with ID: "+r.PathValue("id")+".")
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
		all[i], ids[i] = blockJSON(b), b.id
	}
	s.mu.Unlock()
	paginate(w, all, ids, r.URL.Query().Get("start_cursor"), size)
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
		results[i] = blockJSON(b)
	}
	label, after := blocks[0].text, s.afterWrite
	s.mu.Unlock()
	if after != nil && after(label, w, r) {
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "results": results, "next_cursor": nil, "has_more": false, "type": "block", "block": map[string]any{}})
}
