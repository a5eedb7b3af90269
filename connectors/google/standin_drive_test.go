package google_test

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// splitAnd splits a Drive query at its top-level "and"s: not inside
// quotes, parentheses or braces.
func splitAnd(q string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\\' && quoted:
			i++
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(' || c == '{':
			depth++
		case c == ')' || c == '}':
			depth--
		case depth == 0 && strings.HasPrefix(q[i:], " and "):
			out = append(out, q[start:i])
			start = i + len(" and ")
			i += len(" and ") - 1
		}
	}
	return append(out, q[start:])
}

// mountDrive adds Drive's export, media upload and permissions.
func (s *standin) mountDrive(mux *http.ServeMux) {
	mux.HandleFunc("GET /drive/v3/files/{id}/export", s.wrap("export", s.export))
	mux.HandleFunc("POST /upload/drive/v3/files", s.wrap("upload", s.upload))
	mux.HandleFunc("POST /drive/v3/files/{id}/permissions", s.wrap("share", s.share))
	mux.HandleFunc("GET /drive/v3/files/{id}/permissions", s.wrap("permissions", s.permissions))
}

// exports are the types each Google type exports to, as Drive says.
var exports = map[string][]string{
	"application/vnd.google-apps.document":     {"text/markdown", "text/plain", "application/pdf"},
	"application/vnd.google-apps.spreadsheet":  {"text/csv", "application/pdf"},
	"application/vnd.google-apps.presentation": {"text/plain", "application/pdf"},
}

func (s *standin) fileAt(id string) *file {
	for i := range s.files {
		if s.files[i].ID == id {
			return &s.files[i]
		}
	}
	return nil
}

func (s *standin) export(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fileAt(r.PathValue("id"))
	if f == nil {
		gerror(w, 404, "File not found: "+r.PathValue("id")+".", "notFound", "NOT_FOUND")
		return
	}
	as := r.URL.Query().Get("mimeType")
	if !contains(exports[f.MimeType], as) || as == "text/markdown" && s.noMarkdown {
		gerror(w, 400, "The requested conversion is not supported.", "badRequest", "INVALID_ARGUMENT")
		return
	}
	w.Header().Set("Content-Type", as)
	io.WriteString(w, f.Content)
}

// now is the stand-in's clock, as Drive writes times.
func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func (s *standin) upload(w http.ResponseWriter, r *http.Request) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.URL.Query().Get("uploadType") != "multipart" || err != nil {
		gerror(w, 400, "Bad upload", "badRequest", "INVALID_ARGUMENT")
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var meta file
	var content []byte
	for i := 0; ; i++ {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if i == 0 {
			err = json.NewDecoder(p).Decode(&meta)
		} else {
			content, err = io.ReadAll(p)
		}
		if err != nil {
			gerror(w, 400, "Bad part", "badRequest", "INVALID_ARGUMENT")
			return
		}
	}
	s.mu.Lock()
	s.writes["upload"]++
	meta.ID = fmt.Sprintf("up%d", len(s.files))
	meta.Content, meta.CreatedTime, meta.ModifiedTime = string(content), now(), now()
	meta.Owners = []owner{{EmailAddress: "me@example.com", Me: true}}
	meta.WebViewLink = "https://drive.google.com/file/d/" + meta.ID + "/view"
	if len(meta.Parents) == 0 {
		meta.Parents = []string{"root"}
	}
	s.files = append([]file{meta}, s.files...) // newest first
	after := s.afterWrite
	s.mu.Unlock()
	if after != nil && after("upload", w, r) {
		return
	}
	json.NewEncoder(w).Encode(meta)
}

func (s *standin) share(w http.ResponseWriter, r *http.Request) {
	var p permission
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil || p.Type == "" || p.Role == "" {
		gerror(w, 400, "Bad permission", "badRequest", "INVALID_ARGUMENT")
		return
	}
	s.mu.Lock()
	f := s.fileAt(r.PathValue("id"))
	if f == nil {
		s.mu.Unlock()
		gerror(w, 404, "File not found: "+r.PathValue("id")+".", "notFound", "NOT_FOUND")
		return
	}
	s.writes["share"]++
	p.ID = fmt.Sprintf("perm%d", s.writes["share"])
	f.Perms = append(f.Perms, p)
	after := s.afterWrite
	s.mu.Unlock()
	if after != nil && after("share", w, r) {
		return
	}
	json.NewEncoder(w).Encode(p)
}

func (s *standin) permissions(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fileAt(r.PathValue("id"))
	if f == nil {
		gerror(w, 404, "File not found: "+r.PathValue("id")+".", "notFound", "NOT_FOUND")
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"kind": "drive#permissionList", "permissions": append([]permission{}, f.Perms...)})
}

// addFile adds a file, newest first.
func (s *standin) addFile(f file) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.ModifiedTime == "" {
		f.ModifiedTime = now()
	}
	f.WebViewLink = "https://drive.google.com/file/d/" + f.ID + "/view"
	s.files = append([]file{f}, s.files...)
}

// holds reports whether any data the stand-in keeps for the user holds
// text: a cell, a file's name, content or properties, a document's text.
func (s *standin) holds(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, book := range s.sheets {
		for _, rows := range book {
			if strings.Contains(fmt.Sprint(rows), text) {
				return true
			}
		}
	}
	for _, f := range s.files {
		if strings.Contains(fmt.Sprint(f), text) {
			return true
		}
	}
	for _, d := range s.docs {
		if strings.Contains(d.Title+d.text(), text) {
			return true
		}
	}
	return false
}

func (s *standin) writeCount(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[op]
}
