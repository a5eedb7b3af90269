package notion_test

// The stand-in's comments and users.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// addUsers adds n people to the workspace, and the bot.
func (s *standin) addUsers(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		s.users = append(s.users, map[string]any{"object": "user", "id": fmt.Sprintf("00000000-0000-4000-9000-%012d", i), "type": "person",
			"name": fmt.Sprintf("person %d", i), "avatar_url": nil, "person": map[string]any{"email": fmt.Sprintf("p%d@acme.example", i)}})
	}
	s.users = append(s.users, map[string]any{"object": "user", "id": botID, "type": "bot", "name": "Legate", "avatar_url": nil,
		"bot": map[string]any{"owner": map[string]any{"type": "workspace", "workspace": true}, "workspace_name": "Acme"}})
}

func (s *standin) listUsers(w http.ResponseWriter, r *http.Request) {
	size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
	s.mu.Lock()
	all, ids := make([]any, len(s.users)), make([]string, len(s.users))
	for i, u := range s.users {
		all[i], ids[i] = u, u["id"].(string)
	}
	s.mu.Unlock()
	paginate(w, "user", all, ids, r.URL.Query().Get("start_cursor"), size)
}

func (s *standin) getUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u["id"] == r.PathValue("id") {
			json.NewEncoder(w).Encode(u)
			return
		}
	}
	fail(w, 404, "object_not_found", "Could not find user with ID: "+r.PathValue("id")+".")
}

func commentJSON(c *comment) map[string]any {
	return map[string]any{"object": "comment", "id": c.id, "discussion_id": c.discussion,
		"parent": map[string]any{"type": "page_id", "page_id": c.parent}, "created_time": c.created.Format(time.RFC3339Nano),
		"last_edited_time": c.created.Format(time.RFC3339Nano), "created_by": map[string]any{"object": "user", "id": c.createdBy},
		"rich_text": richJSON(c.text), "display_name": map[string]any{"type": "integration", "resolved_name": "Legate"}}
}

// addComment adds a comment by a person on page (in discussion, or a new
// one when it is "").
func (s *standin) addCommentBy(by, page, discussion, text string) *comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addCommentLocked(by, page, discussion, text)
}

func (s *standin) addCommentLocked(by, page, discussion, text string) *comment {
	if discussion == "" {
		discussion = s.newID()
	}
	c := &comment{id: s.newID(), discussion: discussion, parent: page, text: text, createdBy: by, created: s.now()}
	s.comments = append(s.comments, c)
	return c
}

func (s *standin) listComments(w http.ResponseWriter, r *http.Request) {
	size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
	block := r.URL.Query().Get("block_id")
	s.mu.Lock()
	if !s.parentExists(block) {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find block with ID: "+block+".")
		return
	}
	var all []any
	var ids []string
	for _, c := range s.comments {
		if c.parent == block {
			all, ids = append(all, commentJSON(c)), append(ids, c.id)
		}
	}
	s.mu.Unlock()
	paginate(w, "comment", all, ids, r.URL.Query().Get("start_cursor"), size)
}

func (s *standin) addComment(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Parent       map[string]string `json:"parent"`
		DiscussionID string            `json:"discussion_id"`
		RichText     []map[string]any  `json:"rich_text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "invalid_json", "Error parsing JSON body.")
		return
	}
	text := ""
	for _, run := range req.RichText {
		t, _ := run["text"].(map[string]any)
		c, _ := t["content"].(string)
		text += c
	}
	s.mu.Lock()
	page := req.Parent["page_id"]
	if req.DiscussionID != "" {
		page = ""
		for _, c := range s.comments {
			if c.discussion == req.DiscussionID {
				page = c.parent
			}
		}
	}
	if _, ok := s.pages[page]; !ok || text == "" {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find page or discussion.")
		return
	}
	c := s.addCommentLocked(botID, page, req.DiscussionID, text)
	s.writes++
	out, after := commentJSON(c), s.afterWrite
	s.mu.Unlock()
	if after != nil && after(text, w, r) {
		return
	}
	json.NewEncoder(w).Encode(out)
}
