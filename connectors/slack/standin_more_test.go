package slack_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// more is the stand-in's state beyond channels and posts: users, DMs,
// reactions, files, scheduled messages, read markers, the bodies it
// answered, and the lost answers it plays.
type more struct {
	users     []slack.User
	ims       map[string]string // DM channel -> user
	reactions map[string][]string
	files     []slack.File
	content   map[string][]byte // file id -> bytes
	pending   map[string]slack.File
	sched     []slack.ScheduledMessage
	lastRead  map[string]string
	writes    map[string]int // performed writes by method
	answers   map[string][][]byte
	nextID    int
	// loseFirst, when set, makes every write whose form was not seen
	// before be performed and its answer lost (the connection hangs up).
	loseFirst bool
	seen      map[string]bool
	authorize []string // the query of each authorization request
}

func newMore() more {
	m := more{ims: map[string]string{}, reactions: map[string][]string{}, content: map[string][]byte{}, pending: map[string]slack.File{},
		lastRead: map[string]string{}, writes: map[string]int{}, answers: map[string][][]byte{}, seen: map[string]bool{}, nextID: 1}
	for i, n := range []string{"ada", "grace", "linus", "ken", "barbara", "edsger", "alan"} {
		u := slack.User{ID: fmt.Sprintf("U%03d", 100+i), Name: n, RealName: strings.ToUpper(n[:1]) + n[1:] + " Example", TZ: "Europe/Paris"}
		u.Profile.DisplayName, u.Profile.Email, u.Profile.RealName = n, n+"@example.com", u.RealName
		m.users = append(m.users, u)
	}
	bot := slack.User{ID: "U1", Name: "legate", RealName: "Legate", IsBot: true}
	m.users = append(m.users, bot)
	return m
}

// recorder keeps the body of an answer, for the schema-drift test.
type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *standin) record(method string, body []byte) {
	if len(body) == 0 || body[0] != '{' {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.answers[method]) < 50 {
		s.answers[method] = append(s.answers[method], slices.Clone(body))
	}
}

// who is the account of a request's token: the bot's for botToken, else
// the test user's the token was issued to.
func (s *standin) who(r *http.Request) (id, name, bot string) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = r.FormValue("token")
	}
	if token == userToken {
		return "U100", "ada", ""
	}
	if user, ok := s.oauth.User(token); ok {
		return "U" + strings.ToUpper(strings.NewReplacer("-", "", "_", "").Replace(user)), user, ""
	}
	return "U1", "legate", "B1"
}

// known reports whether channel is a channel or a DM; s.mu is held.
func (s *standin) known(channel string) bool {
	_, im := s.ims[channel]
	return im || slices.ContainsFunc(s.channels, func(c slack.Channel) bool { return c.ID == channel })
}

// wrote counts a performed write; s.mu is held.
func (s *standin) wrote(method string) { s.writes[method]++ }

// lost plays a lost answer after a write was performed: with loseFirst,
// the first request of each form (the token aside) hangs up.
func (s *standin) lost(method string, w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	if !s.loseFirst {
		s.mu.Unlock()
		return false
	}
	form := r.Form
	key := method
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range form {
			if k != "token" && !yield(k) {
				return
			}
		}
	}) {
		key += "&" + k + "=" + strings.Join(form[k], ",")
	}
	first := !s.seen[key]
	s.seen[key] = true
	s.mu.Unlock()
	if first {
		hangUp(w)
	}
	return first
}

func (s *standin) writeCount(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[method]
}

// slackShaped makes the OAuth token endpoint answer a code exchange as
// Slack's oauth.v2.access does: the bot's token at the top, the person's
// under authed_user; and records each authorization request's query.
func (s *standin) slackShaped(pattern string, h http.HandlerFunc) http.HandlerFunc {
	switch {
	case strings.HasSuffix(pattern, "/authorize"):
		return func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.authorize = append(s.authorize, r.URL.RawQuery)
			s.mu.Unlock()
			h(w, r)
		}
	case strings.HasSuffix(pattern, "/token"):
		return func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			h(rec, r)
			var body map[string]any
			if r.PostFormValue("grant_type") != "authorization_code" || rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
				return
			}
			user := map[string]any{"id": "U9", "token_type": "user", "scope": "chat:write"}
			for _, k := range []string{"access_token", "refresh_token", "expires_in"} {
				user[k] = body[k]
			}
			answer(w, map[string]any{"ok": true, "access_token": botToken, "token_type": "bot", "scope": "chat:write", "bot_user_id": "U1",
				"app_id": "A1", "team": map[string]any{"id": "T1", "name": "Acme"}, "authed_user": user})
		}
	}
	return h
}

func (s *standin) bindMore(handle func(string, http.HandlerFunc)) {
	for method, h := range map[string]http.HandlerFunc{
		"users.list": s.usersList, "users.info": s.usersInfo, "users.lookupByEmail": s.usersByEmail,
		"conversations.open": s.open, "conversations.info": s.info, "users.conversations": s.userConversations,
		"search.messages": s.search, "reactions.add": s.react(true), "reactions.remove": s.react(false),
		"conversations.setTopic": s.setTopic, "chat.scheduleMessage": s.schedule, "chat.scheduledMessages.list": s.scheduledList,
		"chat.deleteScheduledMessage": s.deleteScheduled, "files.getUploadURLExternal": s.uploadURL,
		"files.completeUploadExternal": s.completeUpload, "files.list": s.filesList, "files.info": s.fileInfo,
	} {
		handle("/"+method, s.wrap(method, h))
	}
	handle("/upload/", s.upload)
	handle("/download/", s.download)
}

func (s *standin) usersList(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	users, next := page(slices.Clone(s.users), r)
	s.mu.Unlock()
	answer(w, map[string]any{"ok": true, "members": users, "response_metadata": map[string]string{"next_cursor": next}})
}

func (s *standin) userBy(w http.ResponseWriter, match func(slack.User) bool, missing string) {
	s.mu.Lock()
	i := slices.IndexFunc(s.users, match)
	var u slack.User
	if i >= 0 {
		u = s.users[i]
	}
	s.mu.Unlock()
	if i < 0 {
		answer(w, map[string]any{"ok": false, "error": missing})
		return
	}
	answer(w, map[string]any{"ok": true, "user": u})
}

func (s *standin) usersInfo(w http.ResponseWriter, r *http.Request) {
	s.userBy(w, func(u slack.User) bool { return u.ID == r.FormValue("user") }, "user_not_found")
}

func (s *standin) usersByEmail(w http.ResponseWriter, r *http.Request) {
	s.userBy(w, func(u slack.User) bool { return u.Profile.Email == r.FormValue("email") }, "users_not_found")
}

func (s *standin) open(w http.ResponseWriter, r *http.Request) {
	user := r.FormValue("users")
	s.mu.Lock()
	ok := slices.ContainsFunc(s.users, func(u slack.User) bool { return u.ID == user })
	id := "D" + strings.TrimPrefix(user, "U")
	if ok {
		s.ims[id] = user
	}
	s.mu.Unlock()
	if !ok {
		answer(w, map[string]any{"ok": false, "error": "user_not_found"})
		return
	}
	ch := slack.Channel{}
	ch.ID, ch.IsIM, ch.User = id, true, user
	answer(w, map[string]any{"ok": true, "channel": ch})
}

// channelNow is channel id as conversations.info shows it; s.mu is held.
func (s *standin) channelNow(id string) (slack.Channel, bool) {
	if user, ok := s.ims[id]; ok {
		ch := slack.Channel{}
		ch.ID, ch.IsIM, ch.User = id, true, user
		return s.withLatest(ch), true
	}
	i := slices.IndexFunc(s.channels, func(c slack.Channel) bool { return c.ID == id })
	if i < 0 {
		return slack.Channel{}, false
	}
	return s.withLatest(s.channels[i]), true
}

func (s *standin) withLatest(ch slack.Channel) slack.Channel {
	ch.LastRead = s.lastRead[ch.ID]
	if ms := s.messages[ch.ID]; len(ms) > 0 {
		latest := ms[len(ms)-1]
		ch.Latest = &latest
	}
	return ch
}

func (s *standin) info(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ch, ok := s.channelNow(r.FormValue("channel"))
	s.mu.Unlock()
	if !ok {
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	answer(w, map[string]any{"ok": true, "channel": ch})
}

func (s *standin) userConversations(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	all := slices.Clone(s.channels)
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range s.ims {
			if !yield(id) {
				return
			}
		}
	}) {
		ch, _ := s.channelNow(id)
		ch.Latest = nil
		all = append(all, ch)
	}
	s.mu.Unlock()
	got, next := page(all, r)
	answer(w, map[string]any{"ok": true, "channels": got, "response_metadata": map[string]string{"next_cursor": next}})
}

func (s *standin) search(w http.ResponseWriter, r *http.Request) {
	if _, _, bot := s.who(r); bot != "" {
		answer(w, map[string]any{"ok": false, "error": "not_allowed_token_type"})
		return
	}
	q := strings.ToLower(r.FormValue("query"))
	count, _ := strconv.Atoi(r.FormValue("count"))
	pg, _ := strconv.Atoi(r.FormValue("page"))
	pg = max(pg, 1)
	s.mu.Lock()
	var matches []slack.SearchMessage
	for _, ch := range s.channels {
		for _, m := range s.messages[ch.ID] {
			if strings.Contains(strings.ToLower(m.Text), q) {
				matches = append(matches, slack.SearchMessage{Type: "message", Channel: slack.CtxChannel{ID: ch.ID, Name: ch.Name}, User: m.User, Timestamp: m.Timestamp, Text: m.Text,
					Permalink: "https://acme.slack.com/archives/" + ch.ID + "/p" + strings.ReplaceAll(m.Timestamp, ".", "")})
			}
		}
	}
	s.mu.Unlock()
	pages := (len(matches) + count - 1) / count
	start := min((pg-1)*count, len(matches))
	got := matches[start:min(start+count, len(matches))]
	answer(w, map[string]any{"ok": true, "query": r.FormValue("query"), "messages": map[string]any{"matches": got, "total": len(matches),
		"paging":     map[string]int{"count": count, "total": len(matches), "page": pg, "pages": pages},
		"pagination": map[string]int{"total_count": len(matches), "page": pg, "per_page": count, "page_count": pages, "first": start + 1, "last": start + len(got)}}})
}

func (s *standin) react(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		me, _, _ := s.who(r)
		key := r.FormValue("channel") + "/" + r.FormValue("timestamp") + "/" + r.FormValue("name")
		s.mu.Lock()
		has := slices.Contains(s.reactions[key], me)
		switch {
		case add && has:
			s.mu.Unlock()
			answer(w, map[string]any{"ok": false, "error": "already_reacted"})
			return
		case !add && !has:
			s.mu.Unlock()
			answer(w, map[string]any{"ok": false, "error": "no_reaction"})
			return
		case add:
			s.reactions[key] = append(s.reactions[key], me)
			s.wrote("reactions.add")
		default:
			s.reactions[key] = slices.DeleteFunc(s.reactions[key], func(u string) bool { return u == me })
			s.wrote("reactions.remove")
		}
		s.mu.Unlock()
		if s.lost(map[bool]string{true: "reactions.add", false: "reactions.remove"}[add], w, r) {
			return
		}
		answer(w, map[string]any{"ok": true})
	}
}

func (s *standin) setTopic(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := slices.IndexFunc(s.channels, func(c slack.Channel) bool { return c.ID == r.FormValue("channel") })
	if i < 0 {
		s.mu.Unlock()
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	s.channels[i].Topic.Value = r.FormValue("topic")
	ch := s.channels[i]
	s.wrote("conversations.setTopic")
	s.mu.Unlock()
	if s.lost("conversations.setTopic", w, r) {
		return
	}
	answer(w, map[string]any{"ok": true, "channel": ch})
}

func (s *standin) schedule(w http.ResponseWriter, r *http.Request) {
	at, _ := strconv.Atoi(r.FormValue("post_at"))
	s.mu.Lock()
	if !s.known(r.FormValue("channel")) {
		s.mu.Unlock()
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	m := slack.ScheduledMessage{ID: fmt.Sprintf("Q%04d", s.nextID), Channel: r.FormValue("channel"), PostAt: at, DateCreated: 1800000000, Text: r.FormValue("text")}
	s.nextID++
	s.sched = append(s.sched, m)
	s.wrote("chat.scheduleMessage")
	s.mu.Unlock()
	if s.lost("chat.scheduleMessage", w, r) {
		return
	}
	msg := slack.Message{}
	msg.Text, msg.Type = m.Text, "message"
	answer(w, map[string]any{"ok": true, "channel": m.Channel, "scheduled_message_id": m.ID, "post_at": strconv.Itoa(at), "message": msg})
}

func (s *standin) scheduledList(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var got []slack.ScheduledMessage
	for _, m := range s.sched {
		oldest, _ := strconv.Atoi(r.FormValue("oldest"))
		latest, _ := strconv.Atoi(r.FormValue("latest"))
		if ch := r.FormValue("channel"); (ch == "" || m.Channel == ch) && m.PostAt >= oldest && (latest == 0 || m.PostAt <= latest) {
			got = append(got, m)
		}
	}
	s.mu.Unlock()
	got, next := page(got, r)
	answer(w, map[string]any{"ok": true, "scheduled_messages": got, "response_metadata": map[string]string{"next_cursor": next}})
}

func (s *standin) deleteScheduled(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := slices.IndexFunc(s.sched, func(m slack.ScheduledMessage) bool {
		return m.ID == r.FormValue("scheduled_message_id") && m.Channel == r.FormValue("channel")
	})
	if i < 0 {
		s.mu.Unlock()
		answer(w, map[string]any{"ok": false, "error": "invalid_scheduled_message_id"})
		return
	}
	s.sched = slices.Delete(s.sched, i, i+1)
	s.wrote("chat.deleteScheduledMessage")
	s.mu.Unlock()
	if s.lost("chat.deleteScheduledMessage", w, r) {
		return
	}
	answer(w, map[string]any{"ok": true})
}

func (s *standin) uploadURL(w http.ResponseWriter, r *http.Request) {
	size, _ := strconv.Atoi(r.FormValue("length"))
	s.mu.Lock()
	id := fmt.Sprintf("F%04d", s.nextID)
	s.nextID++
	s.pending[id] = slack.File{ID: id, Name: r.FormValue("filename"), Size: size}
	s.mu.Unlock()
	answer(w, map[string]any{"ok": true, "upload_url": s.url() + "upload/" + id, "file_id": id})
}

func (s *standin) upload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	f, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, "no file", http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(f)
	s.mu.Lock()
	s.content[id] = b
	s.mu.Unlock()
	w.Write([]byte("OK - " + strconv.Itoa(len(b))))
}

func (s *standin) completeUpload(w http.ResponseWriter, r *http.Request) {
	var sums []slack.FileSummary
	json.Unmarshal([]byte(r.FormValue("files")), &sums)
	me, _, _ := s.who(r)
	s.mu.Lock()
	var done []slack.FileSummary
	for _, sum := range sums {
		f, ok := s.pending[sum.ID]
		if !ok || len(s.content[sum.ID]) != f.Size {
			s.mu.Unlock()
			answer(w, map[string]any{"ok": false, "error": "file_not_found"})
			return
		}
		delete(s.pending, sum.ID)
		f.Title, f.User, f.Mimetype, f.Filetype = sum.Title, me, "text/plain", "text"
		f.Channels = []string{r.FormValue("channel_id")}
		f.Created, f.Timestamp = slack.JSONTime(1800000000+s.nextID), slack.JSONTime(1800000000+s.nextID)
		f.URLPrivate = s.url() + "download/" + f.ID
		f.URLPrivateDownload = f.URLPrivate
		f.Permalink = "https://acme.slack.com/files/" + me + "/" + f.ID
		s.files = append(s.files, f)
		s.wrote("files.completeUploadExternal")
		done = append(done, slack.FileSummary{ID: f.ID, Title: f.Title})
	}
	s.mu.Unlock()
	if s.lost("files.completeUploadExternal", w, r) {
		return
	}
	answer(w, map[string]any{"ok": true, "files": done})
}

func (s *standin) filesList(w http.ResponseWriter, r *http.Request) {
	from, _ := strconv.Atoi(r.FormValue("ts_from"))
	s.mu.Lock()
	var got []slack.File
	for _, f := range s.files {
		if (r.FormValue("channel") == "" || slices.Contains(f.Channels, r.FormValue("channel"))) && (r.FormValue("user") == "" || f.User == r.FormValue("user")) && int(f.Created) >= from {
			got = append(got, f)
		}
	}
	s.mu.Unlock()
	slices.Reverse(got) // newest first
	total := len(got)
	count, _ := strconv.Atoi(r.FormValue("count"))
	got = got[:min(len(got), max(count, 1))]
	files := make([]map[string]any, len(got))
	for i, f := range got { // the fields Find reads, as files.list's compact answer
		files[i] = map[string]any{"id": f.ID, "name": f.Name, "title": f.Title, "size": f.Size, "user": f.User, "created": f.Created, "timestamp": f.Timestamp,
			"mimetype": f.Mimetype, "filetype": f.Filetype, "channels": f.Channels, "permalink": f.Permalink}
	}
	answer(w, map[string]any{"ok": true, "files": files, "paging": slack.Paging{Count: count, Total: total, Page: 1, Pages: (total + count - 1) / max(count, 1)}})
}

func (s *standin) fileInfo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := slices.IndexFunc(s.files, func(f slack.File) bool { return f.ID == r.FormValue("file") })
	var f slack.File
	if i >= 0 {
		f = s.files[i]
	}
	s.mu.Unlock()
	if i < 0 {
		answer(w, map[string]any{"ok": false, "error": "file_not_found"})
		return
	}
	answer(w, map[string]any{"ok": true, "file": f, "comments": []slack.Comment{}, "paging": slack.Paging{Count: 0, Total: 0, Page: 1, Pages: 1}})
}

func (s *standin) download(w http.ResponseWriter, r *http.Request) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if _, issued := s.oauth.User(token); token != botToken && token != userToken && !issued {
		http.Error(w, "no", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	b, ok := s.content[strings.TrimPrefix(r.URL.Path, "/download/")]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write(b)
}

type slackScheduled = slack.ScheduledMessage

// seededFile is a text file the stand-in holds from the start.
func seededFile(base string) slack.File {
	return slack.File{ID: "F9000", Name: "seeded.txt", Title: "seeded", Mimetype: "text/plain", Filetype: "text", Size: 11, User: "U100",
		Created: 1700000000, Timestamp: 1700000000, URLPrivate: base + "download/F9000", URLPrivateDownload: base + "download/F9000", Channels: []string{"C000"}}
}
