package calendar_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	token   = "ya29.stand-in-access-token"
	account = "me@example.com"
	team    = "team@group.calendar.google.com"
	holiday = "en.french#holiday@group.v.calendar.google.com"
)

// edt is a start or end as Calendar holds it.
type edt struct {
	Date     string `json:"date,omitempty"`
	DateTime string `json:"dateTime,omitempty"`
	TimeZone string `json:"timeZone,omitempty"`
}

// at is the instant of d: a date at midnight UTC.
func (d edt) at() time.Time {
	if d.Date != "" {
		v, _ := time.Parse(time.DateOnly, d.Date)
		return v
	}
	if v, err := time.Parse(time.RFC3339, d.DateTime); err == nil {
		return v
	}
	loc, _ := time.LoadLocation(d.TimeZone)
	v, _ := time.ParseInLocation("2006-01-02T15:04:05", d.DateTime, loc)
	return v
}

type attendee struct {
	Email          string `json:"email"`
	DisplayName    string `json:"displayName,omitempty"`
	ResponseStatus string `json:"responseStatus,omitempty"`
	Comment        string `json:"comment,omitempty"`
	Optional       bool   `json:"optional,omitempty"`
	Self           bool   `json:"self,omitempty"`
}

// sevent is an event the stand-in holds, in the shape it takes and gives.
type sevent struct {
	ID          string     `json:"id"`
	Status      string     `json:"status"`
	Summary     string     `json:"summary,omitempty"`
	Description string     `json:"description,omitempty"`
	Location    string     `json:"location,omitempty"`
	Start       *edt       `json:"start,omitempty"`
	End         *edt       `json:"end,omitempty"`
	Attendees   []attendee `json:"attendees,omitempty"`
	Organizer   string     `json:"-"`
	Created     time.Time  `json:"-"`
	Updated     time.Time  `json:"-"`
}

type answer struct {
	kind string
	body []byte
}

// standin is a Calendar API on 127.0.0.1 for one account: its calendar
// list, events per calendar kept in memory so that writes read back, and
// free/busy computed from them. It is an http.Handler.
type standin struct {
	srv *httptest.Server
	mux *http.ServeMux

	mu      sync.Mutex
	events  map[string]map[string]*sevent // by calendar, by id
	seq     int
	counts  map[string]int
	writes  map[string]int
	answers []answer

	fault func(op string, n int, w http.ResponseWriter) bool
	lose  func(op string) bool
}

func newStandin(t *testing.T) *standin {
	s := &standin{events: map[string]map[string]*sevent{account: {}, team: {}, holiday: {"noel": {ID: "noel", Status: "confirmed", Summary: "Noël", Organizer: holiday, Start: &edt{Date: "2026-12-25"}, End: &edt{Date: "2026-12-26"}}}}, counts: map[string]int{}, writes: map[string]int{}}
	s.mux = http.NewServeMux()
	base := "/calendar/v3/"
	for pattern, h := range map[string]func(w http.ResponseWriter, r *http.Request){
		"GET " + base + "users/me/calendarList":          s.calendarList,
		"GET " + base + "calendars/{cal}/events":         s.listEvents,
		"POST " + base + "calendars/{cal}/events":        s.insert,
		"GET " + base + "calendars/{cal}/events/{id}":    s.get,
		"PATCH " + base + "calendars/{cal}/events/{id}":  s.patch,
		"DELETE " + base + "calendars/{cal}/events/{id}": s.delete,
		"POST " + base + "freeBusy":                      s.freeBusy,
	} {
		op := pattern
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				s.fail(w, http.StatusUnauthorized, "authError", "Invalid Credentials")
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

func (s *standin) fail(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg,
		"errors": []map[string]any{{"message": msg, "domain": "global", "reason": reason}}}})
}

func (s *standin) reply(w http.ResponseWriter, op, kind string, v any) {
	b, _ := json.Marshal(v)
	s.mu.Lock()
	s.answers = append(s.answers, answer{kind, b})
	s.mu.Unlock()
	if s.lose != nil && s.lose(op) {
		s.fail(w, http.StatusServiceUnavailable, "backendError", "Backend Error")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(b)
}

// calendar is the events of a calendar id, "primary" the account's.
func (s *standin) calendar(id string) (map[string]*sevent, string) {
	if id == "primary" {
		id = account
	}
	return s.events[id], id
}

// add stores e in calendar cal with a new id unless it has one.
func (s *standin) add(cal string, e *sevent) *sevent {
	s.mu.Lock()
	defer s.mu.Unlock()
	events, _ := s.calendar(cal)
	if e.ID == "" {
		s.seq++
		e.ID = fmt.Sprintf("ev%05d", s.seq)
	}
	if e.Status == "" {
		e.Status = "confirmed"
	}
	if e.Organizer == "" {
		e.Organizer = account
	}
	e.Created, e.Updated = time.Now(), time.Now()
	events[e.ID] = e
	return e
}

// seed stores n one-hour events on the primary calendar, a day apart from
// Dec 1 2026 10:00 UTC: "standup i".
func (s *standin) seed(n int) {
	for i := range n {
		start := time.Date(2026, 12, 1+i, 10, 0, 0, 0, time.UTC)
		s.add("primary", &sevent{Summary: fmt.Sprintf("standup %d", i), Start: &edt{DateTime: start.Format(time.RFC3339)},
			End: &edt{DateTime: start.Add(time.Hour).Format(time.RFC3339)}, Attendees: []attendee{{Email: account, ResponseStatus: "accepted"}}})
	}
}

func (s *standin) eventJSON(cal string, e *sevent) map[string]any {
	b, _ := json.Marshal(e)
	var out map[string]any
	json.Unmarshal(b, &out)
	for _, k := range []string{"start", "end"} {
		d := map[string]*edt{"start": e.Start, "end": e.End}[k]
		if d != nil && d.DateTime != "" {
			loc, _ := time.LoadLocation(d.TimeZone)
			out[k].(map[string]any)["dateTime"] = d.at().In(loc).Format(time.RFC3339) // Calendar answers with the offset
		}
	}
	out["kind"], out["etag"] = "calendar#event", fmt.Sprintf("\"%d\"", e.Updated.UnixNano())
	out["htmlLink"] = "https://www.google.com/calendar/event?eid=" + e.ID
	out["created"], out["updated"] = e.Created.UTC().Format(time.RFC3339), e.Updated.UTC().Format(time.RFC3339)
	out["iCalUID"], out["sequence"], out["eventType"] = e.ID+"@google.com", 0, "default"
	out["organizer"] = map[string]any{"email": e.Organizer, "self": e.Organizer == account}
	out["creator"] = map[string]any{"email": e.Organizer, "self": e.Organizer == account}
	if atts, ok := out["attendees"].([]any); ok {
		for _, a := range atts {
			m := a.(map[string]any)
			if m["email"] == account {
				m["self"] = true
			}
			if m["email"] == e.Organizer {
				m["organizer"] = true
			}
		}
	}
	return out
}

func (s *standin) calendarList(w http.ResponseWriter, r *http.Request) {
	all := []map[string]any{
		{"kind": "calendar#calendarListEntry", "id": account, "summary": account, "timeZone": "Europe/Paris", "accessRole": "owner", "primary": true},
		{"kind": "calendar#calendarListEntry", "id": team, "summary": "Team", "description": "the team's", "timeZone": "UTC", "accessRole": "writer"},
		{"kind": "calendar#calendarListEntry", "id": holiday, "summary": "Holidays", "summaryOverride": "Jours fériés", "timeZone": "Europe/Paris", "accessRole": "reader"},
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
	size, _ := strconv.Atoi(r.URL.Query().Get("maxResults"))
	off = min(off, len(all))
	end := min(off+max(size, 1), len(all))
	out := map[string]any{"kind": "calendar#calendarList", "etag": "\"l\"", "items": all[off:end]}
	if end < len(all) {
		out["nextPageToken"] = strconv.Itoa(end)
	}
	s.reply(w, "", "CalendarList", out)
}

func (s *standin) listEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("orderBy") == "startTime" && q.Get("singleEvents") != "true" {
		s.fail(w, http.StatusBadRequest, "invalid", "The requested ordering is not available for the particular query.")
		return
	}
	lo, _ := time.Parse(time.RFC3339, q.Get("timeMin"))
	hi, errHi := time.Parse(time.RFC3339, q.Get("timeMax"))
	s.mu.Lock()
	events, id := s.calendar(r.PathValue("cal"))
	if events == nil {
		s.mu.Unlock()
		s.fail(w, http.StatusNotFound, "notFound", "Not Found")
		return
	}
	var match []*sevent
	for _, e := range events {
		text := strings.ToLower(e.Summary + " " + e.Description + " " + e.Location)
		switch {
		case e.Status == "cancelled" && q.Get("showDeleted") != "true":
		case q.Has("timeMin") && !e.End.at().After(lo):
		case errHi == nil && !e.Start.at().Before(hi):
		case q.Get("q") != "" && !strings.Contains(text, strings.ToLower(q.Get("q"))):
		default:
			match = append(match, e)
		}
	}
	sort.Slice(match, func(i, j int) bool { return match[i].Start.at().Before(match[j].Start.at()) })
	off, _ := strconv.Atoi(q.Get("pageToken"))
	size, _ := strconv.Atoi(q.Get("maxResults"))
	if size <= 0 {
		size = 250
	}
	off = min(off, len(match))
	end := min(off+size, len(match))
	items := []any{}
	for _, e := range match[off:end] {
		items = append(items, s.eventJSON(id, e))
	}
	s.mu.Unlock()
	out := map[string]any{"kind": "calendar#events", "etag": "\"e\"", "summary": id, "timeZone": "UTC", "accessRole": "owner", "items": items}
	if end < len(match) {
		out["nextPageToken"] = strconv.Itoa(end)
	}
	s.reply(w, "", "Events", out)
}

var eventID = regexp.MustCompile(`^[a-v0-9]{5,}$`)

func (s *standin) insert(w http.ResponseWriter, r *http.Request) {
	var e sevent
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil || e.Start == nil || e.End == nil {
		s.fail(w, http.StatusBadRequest, "required", "Missing end time.")
		return
	}
	if e.ID != "" && (!eventID.MatchString(e.ID) || len(e.ID) > 1024) {
		s.fail(w, http.StatusBadRequest, "invalid", "Invalid resource id value.")
		return
	}
	s.mu.Lock()
	events, id := s.calendar(r.PathValue("cal"))
	_, exists := events[e.ID]
	s.mu.Unlock()
	switch {
	case events == nil:
		s.fail(w, http.StatusNotFound, "notFound", "Not Found")
		return
	case exists:
		s.fail(w, http.StatusConflict, "duplicate", "The requested identifier already exists.")
		return
	}
	for i := range e.Attendees {
		e.Attendees[i].ResponseStatus = "needsAction"
	}
	s.add(id, &e)
	s.mu.Lock()
	s.writes["insert"]++
	out := s.eventJSON(id, &e)
	s.mu.Unlock()
	s.reply(w, "insert", "Event", out)
}

// event is the event of the request's path, or answers 404.
func (s *standin) event(w http.ResponseWriter, r *http.Request) (*sevent, string) {
	events, id := s.calendar(r.PathValue("cal"))
	e := events[r.PathValue("id")]
	if e == nil {
		s.fail(w, http.StatusNotFound, "notFound", "Not Found")
	}
	return e, id
}

func (s *standin) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	e, cal := s.event(w, r)
	var out map[string]any
	if e != nil {
		out = s.eventJSON(cal, e)
	}
	s.mu.Unlock()
	if e != nil {
		s.reply(w, "", "Event", out)
	}
}

func (s *standin) patch(w http.ResponseWriter, r *http.Request) {
	var in map[string]json.RawMessage
	json.NewDecoder(r.Body).Decode(&in)
	s.mu.Lock()
	e, cal := s.event(w, r)
	if e == nil {
		s.mu.Unlock()
		return
	}
	b, _ := json.Marshal(in)
	json.Unmarshal(b, e) // the fields given replace the event's
	for i := range e.Attendees {
		e.Attendees[i].Self = false
	}
	e.Updated = time.Now()
	s.writes["patch"]++
	out := s.eventJSON(cal, e)
	s.mu.Unlock()
	s.reply(w, "patch", "Event", out)
}

func (s *standin) delete(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	e, _ := s.event(w, r)
	switch {
	case e == nil:
		s.mu.Unlock()
		return
	case e.Status == "cancelled":
		s.mu.Unlock()
		s.fail(w, http.StatusGone, "deleted", "Resource has been deleted")
		return
	}
	e.Status, e.Updated = "cancelled", time.Now()
	s.writes["delete"]++
	s.mu.Unlock()
	if s.lose != nil && s.lose("delete") {
		s.fail(w, http.StatusServiceUnavailable, "backendError", "Backend Error")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *standin) freeBusy(w http.ResponseWriter, r *http.Request) {
	var in struct {
		TimeMin, TimeMax string
		Items            []struct{ ID string }
	}
	json.NewDecoder(r.Body).Decode(&in)
	lo, _ := time.Parse(time.RFC3339, in.TimeMin)
	hi, _ := time.Parse(time.RFC3339, in.TimeMax)
	cals := map[string]any{}
	s.mu.Lock()
	for _, it := range in.Items {
		events, _ := s.calendar(it.ID)
		if events == nil {
			cals[it.ID] = map[string]any{"errors": []any{map[string]any{"domain": "global", "reason": "notFound"}}, "busy": []any{}}
			continue
		}
		var busy []map[string]string
		for _, e := range events {
			if e.Status != "cancelled" && e.End.at().After(lo) && e.Start.at().Before(hi) {
				busy = append(busy, map[string]string{"start": e.Start.at().UTC().Format(time.RFC3339), "end": e.End.at().UTC().Format(time.RFC3339)})
			}
		}
		sort.Slice(busy, func(i, j int) bool { return busy[i]["start"] < busy[j]["start"] })
		cals[it.ID] = map[string]any{"busy": busy}
	}
	s.mu.Unlock()
	s.reply(w, "", "FreeBusyResponse", map[string]any{"kind": "calendar#freeBusy", "timeMin": in.TimeMin, "timeMax": in.TimeMax, "calendars": cals})
}

// noMarkers fails when an event holds a mark of Legate's.
func (s *standin) noMarkers(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, events := range s.events {
		for _, e := range events {
			b, _ := json.Marshal(e)
			for _, mark := range []string{"lg1-", "legate", "op-"} {
				if strings.Contains(strings.ToLower(string(b)), mark) {
					t.Fatalf("event %s holds %q: %s", e.ID, mark, b)
				}
			}
		}
	}
}
