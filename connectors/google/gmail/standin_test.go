package gmail_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	token   = "ya29.stand-in-access-token"
	account = "me@example.com"
)

// smsg is a message the stand-in holds.
type smsg struct {
	id, thread string
	labels     []string
	date       int64 // internalDate, ms
	headers    [][2]string
	text, html string
	files      []sfile
}

type sfile struct {
	id, name, mime string
	data           []byte
}

func (m *smsg) header(name string) string {
	for _, h := range m.headers {
		if strings.EqualFold(h[0], name) {
			return h[1]
		}
	}
	return ""
}

// answer is a JSON answer the stand-in gave: kind names the type of
// gmail/v1 it must decode into (drift_test.go).
type answer struct {
	kind string
	body []byte
}

// standin is a Gmail API on 127.0.0.1 for one account: messages, threads,
// labels, drafts and attachments, kept in memory so that writes read
// back. It is an http.Handler.
type standin struct {
	t   *testing.T
	srv *httptest.Server
	mux *http.ServeMux

	mu       sync.Mutex
	messages map[string]*smsg
	order    []string // ids, oldest first
	drafts   map[string]string
	userLbls map[string]string // id → name
	seq      int
	counts   map[string]int // requests by op
	writes   map[string]int // writes performed by op
	answers  []answer

	// fault, when it answers true, has answered the n-th request of op.
	fault func(op string, n int, w http.ResponseWriter) bool
	// lose, when it answers true, makes the write of op happen and its
	// answer a 503.
	lose func(op string) bool
}

func newStandin(t *testing.T) *standin {
	s := &standin{t: t, messages: map[string]*smsg{}, drafts: map[string]string{}, counts: map[string]int{}, writes: map[string]int{},
		userLbls: map[string]string{"Label_1": "Receipts", "Label_2": "Travel"}}
	s.mux = http.NewServeMux()
	base := "/gmail/v1/users/me/"
	for pattern, h := range map[string]func(w http.ResponseWriter, r *http.Request){
		"GET " + base + "messages":                        s.listMessages,
		"GET " + base + "messages/{id}":                   s.getMessage,
		"GET " + base + "messages/{id}/attachments/{aid}": s.getAttachment,
		"POST " + base + "messages/send":                  s.sendMessage,
		"POST " + base + "messages/{id}/modify":           s.modify,
		"GET " + base + "threads/{id}":                    s.getThread,
		"GET " + base + "labels":                          s.listLabels,
		"POST " + base + "drafts":                         s.createDraft,
		"GET " + base + "drafts":                          s.listDrafts,
		"GET " + base + "drafts/{id}":                     s.getDraft,
		"GET " + base + "profile":                         s.profile,
	} {
		op := strings.TrimPrefix(strings.SplitN(pattern, " ", 2)[1], base)
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				s.fail(w, http.StatusUnauthorized, "UNAUTHENTICATED", "authError", "Request had invalid authentication credentials.")
				return
			}
			s.mu.Lock()
			s.counts[op]++
			n := s.counts[op]
			s.mu.Unlock()
			if s.fault != nil && s.fault(op, n, w) {
				return
			}
			h(w, r)
		})
	}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *standin) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *standin) writeCount(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[op]
}

// fail answers Google's error format.
func (s *standin) fail(w http.ResponseWriter, code int, status, reason, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status,
		"errors": []map[string]any{{"message": msg, "domain": "global", "reason": reason}}}})
}

func (s *standin) notFound(w http.ResponseWriter) {
	s.fail(w, http.StatusNotFound, "NOT_FOUND", "notFound", "Requested entity was not found.")
}

// reply answers v as JSON and records it as kind; a write of op whose
// answer lose asks to lose answers 503 instead, the write done.
func (s *standin) reply(w http.ResponseWriter, op, kind string, v any) {
	b, _ := json.Marshal(v)
	s.mu.Lock()
	s.answers = append(s.answers, answer{kind, b})
	s.mu.Unlock()
	if s.lose != nil && s.lose(op) {
		s.fail(w, http.StatusServiceUnavailable, "UNAVAILABLE", "backendError", "The service is currently unavailable.")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(b)
}

// add stores m with a new id, in a new thread unless it names one.
func (s *standin) add(m *smsg) *smsg {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addLocked(m)
}

func (s *standin) addLocked(m *smsg) *smsg {
	s.seq++
	m.id = fmt.Sprintf("18c%013x", s.seq)
	if m.thread == "" || !slices.ContainsFunc(s.order, func(id string) bool { return s.messages[id].thread == m.thread }) {
		m.thread = m.id
	}
	if m.date == 0 {
		m.date = time.Now().UnixMilli()
	}
	if m.header("Message-ID") == "" {
		m.headers = append(m.headers, [2]string{"Message-ID", "<" + m.id + "@mail.example.com>"})
	}
	for i, f := range m.files {
		m.files[i].id = fmt.Sprintf("ANGjdJ%s_%d", m.id, i)
		_ = f
	}
	s.messages[m.id] = m
	s.order = append(s.order, m.id)
	return m
}

// seed stores n messages in the inbox, one minute apart, the newest now:
// message i from sender i%3, subject "report i".
func (s *standin) seed(n int) []*smsg {
	var out []*smsg
	for i := range n {
		out = append(out, s.add(&smsg{labels: []string{"INBOX", "UNREAD"}, date: time.Now().Add(time.Duration(i-n) * time.Minute).UnixMilli(),
			headers: [][2]string{{"From", fmt.Sprintf("Sender %d <s%d@example.com>", i%3, i%3)}, {"To", account}, {"Subject", fmt.Sprintf("report %d", i)},
				{"Date", time.Now().Add(time.Duration(i-n) * time.Minute).Format(time.RFC1123Z)}},
			text: fmt.Sprintf("the text of report %d", i)}))
	}
	return out
}

func b64(b []byte) string { return base64.URLEncoding.EncodeToString(b) }

func (s *standin) partOf(m *smsg, format string, headers []string) map[string]any {
	var hs []map[string]any
	for _, h := range m.headers {
		if format == "metadata" && len(headers) > 0 && !slices.ContainsFunc(headers, func(n string) bool { return strings.EqualFold(n, h[0]) }) {
			continue
		}
		hs = append(hs, map[string]any{"name": h[0], "value": h[1]})
	}
	body := func(typ, text string) map[string]any {
		return map[string]any{"partId": "", "mimeType": typ, "filename": "", "headers": []any{map[string]any{"name": "Content-Type", "value": typ + "; charset=UTF-8"}},
			"body": map[string]any{"size": len(text), "data": b64([]byte(text))}}
	}
	root := map[string]any{"partId": "", "mimeType": "text/plain", "filename": "", "headers": hs}
	if format == "metadata" {
		return root
	}
	var alt []any
	if m.text != "" {
		alt = append(alt, body("text/plain", m.text))
	}
	if m.html != "" {
		alt = append(alt, body("text/html", m.html))
	}
	switch {
	case len(m.files) == 0 && len(alt) == 1:
		one := alt[0].(map[string]any)
		root["mimeType"], root["body"] = one["mimeType"], one["body"]
		return root
	case len(m.files) == 0:
		root["mimeType"], root["parts"], root["body"] = "multipart/alternative", alt, map[string]any{"size": 0}
		return root
	}
	parts := []any{map[string]any{"partId": "0", "mimeType": "multipart/alternative", "filename": "", "body": map[string]any{"size": 0}, "parts": alt}}
	for i, f := range m.files {
		parts = append(parts, map[string]any{"partId": strconv.Itoa(i + 1), "mimeType": f.mime, "filename": f.name,
			"headers": []any{map[string]any{"name": "Content-Disposition", "value": "attachment; filename=\"" + f.name + "\""}},
			"body":    map[string]any{"attachmentId": f.id, "size": len(f.data)}})
	}
	root["mimeType"], root["parts"], root["body"] = "multipart/mixed", parts, map[string]any{"size": 0}
	return root
}

func (s *standin) messageJSON(m *smsg, format string, headers []string) map[string]any {
	out := map[string]any{"id": m.id, "threadId": m.thread, "labelIds": m.labels}
	if format == "minimal" {
		return out
	}
	snippet := m.text
	if len(snippet) > 100 {
		snippet = snippet[:100]
	}
	out["snippet"], out["internalDate"], out["historyId"], out["sizeEstimate"] = snippet, strconv.FormatInt(m.date, 10), "4242", len(m.text)+len(m.html)+200
	out["payload"] = s.partOf(m, format, headers)
	return out
}

var queryTerm = regexp.MustCompile(`(\w+):"([^"]*)"|(\w+):(\S+)|(\S+)`)

// matches says that m matches Gmail query q, in the little of Gmail's
// syntax the stand-in knows: in:/label:, is:unread, after: (seconds),
// subject:, from:, and words of the subject or text.
func matches(m *smsg, q string) bool {
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.header("Subject"))
	for _, t := range queryTerm.FindAllStringSubmatch(q, -1) {
		key, val := t[1]+t[3], strings.ToLower(t[2]+t[4])
		if key == "" {
			val = strings.ToLower(t[5])
		}
		ok := true
		switch key {
		case "in", "label":
			ok = slices.ContainsFunc(m.labels, func(l string) bool { return strings.EqualFold(l, val) })
		case "is":
			ok = val != "unread" || slices.Contains(m.labels, "UNREAD")
		case "after":
			sec, _ := strconv.ParseInt(val, 10, 64)
			ok = m.date >= sec*1000
		case "subject":
			ok = strings.Contains(strings.ToLower(subject), val)
		case "from":
			ok = strings.Contains(strings.ToLower(m.header("From")), val)
		case "":
			ok = strings.Contains(strings.ToLower(subject+" "+m.text), val)
		}
		if !ok {
			return false
		}
	}
	return true
}

// page cuts ids at pageToken (an offset) for maxResults (default 100).
func page(ids []string, r *http.Request) ([]string, string) {
	off, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
	size, _ := strconv.Atoi(r.URL.Query().Get("maxResults"))
	if size <= 0 {
		size = 100
	}
	off = min(off, len(ids))
	end := min(off+size, len(ids))
	next := ""
	if end < len(ids) {
		next = strconv.Itoa(end)
	}
	return ids[off:end], next
}

func (s *standin) listMessages(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	q := r.URL.Query()
	var ids []string
	for i := len(s.order) - 1; i >= 0; i-- {
		m := s.messages[s.order[i]]
		hidden := slices.Contains(m.labels, "DRAFT") || q.Get("includeSpamTrash") != "true" && (slices.Contains(m.labels, "SPAM") || slices.Contains(m.labels, "TRASH"))
		if !hidden && matches(m, q.Get("q")) {
			ids = append(ids, m.id)
		}
	}
	cut, next := page(ids, r)
	list := []any{}
	for _, id := range cut {
		list = append(list, map[string]any{"id": id, "threadId": s.messages[id].thread})
	}
	s.mu.Unlock()
	out := map[string]any{"messages": list, "resultSizeEstimate": len(ids)}
	if len(cut) == 0 {
		delete(out, "messages")
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	s.reply(w, "", "ListMessagesResponse", out)
}

func (s *standin) getMessage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	m, ok := s.messages[r.PathValue("id")]
	var out map[string]any
	if ok {
		out = s.messageJSON(m, cmpOr(r.URL.Query().Get("format"), "full"), r.URL.Query()["metadataHeaders"])
	}
	s.mu.Unlock()
	if !ok {
		s.notFound(w)
		return
	}
	s.reply(w, "", "Message", out)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *standin) getAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var found *sfile
	if m, ok := s.messages[r.PathValue("id")]; ok {
		for i := range m.files {
			if m.files[i].id == r.PathValue("aid") {
				found = &m.files[i]
			}
		}
	}
	s.mu.Unlock()
	if found == nil {
		s.notFound(w)
		return
	}
	s.reply(w, "", "MessagePartBody", map[string]any{"attachmentId": found.id, "size": len(found.data), "data": b64(found.data)})
}

func (s *standin) getThread(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var msgs []any
	for _, id := range s.order {
		if m := s.messages[id]; m.thread == r.PathValue("id") {
			msgs = append(msgs, s.messageJSON(m, cmpOr(r.URL.Query().Get("format"), "full"), nil))
		}
	}
	s.mu.Unlock()
	if len(msgs) == 0 {
		s.notFound(w)
		return
	}
	s.reply(w, "", "Thread", map[string]any{"id": r.PathValue("id"), "historyId": "4242", "messages": msgs})
}

func (s *standin) listLabels(w http.ResponseWriter, r *http.Request) {
	var labels []any
	for _, id := range []string{"INBOX", "SENT", "DRAFT", "UNREAD", "STARRED", "IMPORTANT", "SPAM", "TRASH"} {
		labels = append(labels, map[string]any{"id": id, "name": id, "type": "system"})
	}
	s.mu.Lock()
	for _, id := range []string{"Label_1", "Label_2"} {
		labels = append(labels, map[string]any{"id": id, "name": s.userLbls[id], "type": "user", "messageListVisibility": "show", "labelListVisibility": "labelShow"})
	}
	s.mu.Unlock()
	s.reply(w, "", "ListLabelsResponse", map[string]any{"labels": labels})
}

func (s *standin) profile(w http.ResponseWriter, r *http.Request) {
	s.reply(w, "", "Profile", map[string]any{"emailAddress": account, "messagesTotal": len(s.order), "threadsTotal": len(s.order), "historyId": "4242"})
}

// parseRaw reads a message the connector wrote: its headers, text and HTML.
func parseRaw(raw string) (*smsg, error) {
	b, err := base64.URLEncoding.DecodeString(raw)
	if err != nil {
		return nil, err
	}
	msg, err := mail.ReadMessage(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	m := &smsg{headers: [][2]string{{"From", account}, {"Date", time.Now().Format(time.RFC1123Z)}}}
	for _, k := range []string{"To", "Cc", "Bcc", "Subject", "In-Reply-To", "References"} {
		if v := msg.Header.Get(k); v != "" {
			m.headers = append(m.headers, [2]string{k, v})
		}
	}
	typ, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	if typ == "text/plain" {
		body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
		m.text = string(body)
		return m, err
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(p)
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			m.html = string(body)
		} else {
			m.text = string(body)
		}
	}
}

type rawIn struct {
	Raw      string `json:"raw"`
	ThreadID string `json:"threadId"`
}

func (s *standin) sendMessage(w http.ResponseWriter, r *http.Request) {
	var in rawIn
	json.NewDecoder(r.Body).Decode(&in)
	m, err := parseRaw(in.Raw)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "invalidArgument", "Invalid raw message.")
		return
	}
	m.thread, m.labels = in.ThreadID, []string{"SENT"}
	s.mu.Lock()
	s.addLocked(m)
	s.writes["send"]++
	out := s.messageJSON(m, "minimal", nil)
	s.mu.Unlock()
	s.reply(w, "send", "Message", out)
}

func (s *standin) createDraft(w http.ResponseWriter, r *http.Request) {
	var in struct{ Message rawIn }
	json.NewDecoder(r.Body).Decode(&in)
	m, err := parseRaw(in.Message.Raw)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "invalidArgument", "Invalid raw message.")
		return
	}
	m.thread, m.labels = in.Message.ThreadID, []string{"DRAFT"}
	s.mu.Lock()
	s.addLocked(m)
	id := "r-" + m.id
	s.drafts[id] = m.id
	s.writes["drafts"]++
	out := map[string]any{"id": id, "message": s.messageJSON(m, "minimal", nil)}
	s.mu.Unlock()
	s.reply(w, "drafts", "Draft", out)
}

func (s *standin) listDrafts(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var ids []string
	for i := len(s.order) - 1; i >= 0; i-- {
		m := s.messages[s.order[i]]
		if slices.Contains(m.labels, "DRAFT") && matches(m, r.URL.Query().Get("q")) {
			ids = append(ids, "r-"+m.id)
		}
	}
	cut, next := page(ids, r)
	list := []any{}
	for _, id := range cut {
		list = append(list, map[string]any{"id": id, "message": map[string]any{"id": s.drafts[id], "threadId": s.messages[s.drafts[id]].thread}})
	}
	s.mu.Unlock()
	out := map[string]any{"drafts": list, "resultSizeEstimate": len(ids)}
	if next != "" {
		out["nextPageToken"] = next
	}
	s.reply(w, "", "ListDraftsResponse", out)
}

func (s *standin) getDraft(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	id, ok := s.drafts[r.PathValue("id")]
	var out map[string]any
	if ok {
		out = map[string]any{"id": r.PathValue("id"), "message": s.messageJSON(s.messages[id], cmpOr(r.URL.Query().Get("format"), "full"), nil)}
	}
	s.mu.Unlock()
	if !ok {
		s.notFound(w)
		return
	}
	s.reply(w, "", "Draft", out)
}

func (s *standin) modify(w http.ResponseWriter, r *http.Request) {
	var in struct{ AddLabelIds, RemoveLabelIds []string }
	json.NewDecoder(r.Body).Decode(&in)
	s.mu.Lock()
	m, ok := s.messages[r.PathValue("id")]
	var out map[string]any
	if ok {
		for _, l := range in.AddLabelIds {
			if !slices.Contains(m.labels, l) {
				m.labels = append(m.labels, l)
			}
		}
		m.labels = slices.DeleteFunc(m.labels, func(l string) bool { return slices.Contains(in.RemoveLabelIds, l) })
		s.writes["modify"]++
		out = s.messageJSON(m, "minimal", nil)
	}
	s.mu.Unlock()
	if !ok {
		s.notFound(w)
		return
	}
	s.reply(w, "modify", "Message", out)
}
