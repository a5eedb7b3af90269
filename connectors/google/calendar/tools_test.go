package calendar_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/google/calendar"
	"github.com/legate-mcp/legate/connectors/saas"
)

// toolCase calls one tool against the stand-in and checks what it did.
type toolCase func(t *testing.T, s *standin, e *env)

// invite stores an event organized by someone else with the account
// among its attendees, not yet answered.
func (s *standin) invite() *sevent {
	return s.add("primary", &sevent{Summary: "Design review", Organizer: "ana@example.com",
		Start: &edt{DateTime: "2026-12-02T14:00:00+01:00"}, End: &edt{DateTime: "2026-12-02T15:00:00+01:00"},
		Attendees: []attendee{{Email: "ana@example.com", ResponseStatus: "accepted"}, {Email: account, ResponseStatus: "needsAction"}}})
}

var toolCases = map[string]toolCase{
	"calendar_list_calendars": func(t *testing.T, s *standin, e *env) {
		l := do[saas.List[calendar.Calendar]](t, e, "calendar_list_calendars", `{"limit":2}`, "")
		rest := do[saas.List[calendar.Calendar]](t, e, "calendar_list_calendars", fmt.Sprintf(`{"cursor":%q}`, l.NextCursor), "")
		if len(l.Items) != 2 || !l.Items[0].Primary || l.Items[0].ExternalID != account || l.Items[1].Summary != "Team" ||
			len(rest.Items) != 1 || rest.Items[0].Summary != "Jours fériés" || rest.NextCursor != "" {
			t.Fatalf("calendars %+v, then %+v", l, rest)
		}
		evs := do[saas.List[calendar.Event]](t, e, "calendar_list_events", fmt.Sprintf(`{"calendar":%q,"time_min":"2026-01-01T00:00:00Z"}`, l.Items[1].Ref), "")
		if len(evs.Items) != 0 {
			t.Fatalf("the team calendar has %d events", len(evs.Items))
		}
		hol := do[saas.List[calendar.Event]](t, e, "calendar_list_events", fmt.Sprintf(`{"calendar_id":%q,"time_min":"2026-12-01T00:00:00Z"}`, holiday), "")
		if len(hol.Items) != 1 || hol.Items[0].Summary != "Noël" || hol.Items[0].StartDate != "2026-12-25" {
			t.Fatalf("holidays %+v", hol.Items)
		}
	},
	"calendar_list_events": func(t *testing.T, s *standin, e *env) {
		s.seed(5)
		s.add("primary", &sevent{Summary: "Offsite", Location: "Lyon", Start: &edt{Date: "2026-12-03"}, End: &edt{Date: "2026-12-05"}})
		l := do[saas.List[calendar.Event]](t, e, "calendar_list_events", `{"time_min":"2026-12-02T00:00:00Z","time_max":"2026-12-04T00:00:00Z"}`, "")
		var got []string
		for _, ev := range l.Items {
			got = append(got, ev.Summary)
		}
		if strings.Join(got, ",") != "standup 1,Offsite,standup 2" || !l.Items[1].AllDay || l.Items[1].StartDate != "2026-12-03" || l.Items[1].EndDate != "2026-12-05" ||
			!l.Items[0].Start.Equal(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)) || l.Items[0].Attendees[0].Response != "accepted" || !l.Items[0].Attendees[0].Self {
			t.Fatalf("events %v: %+v", got, l.Items)
		}
		q := do[saas.List[calendar.Event]](t, e, "calendar_list_events", `{"time_min":"2026-11-01T00:00:00Z","q":"lyon"}`, "")
		if len(q.Items) != 1 || q.Items[0].Summary != "Offsite" {
			t.Fatalf("q=lyon: %+v", q.Items)
		}
	},
	"calendar_free_busy": func(t *testing.T, s *standin, e *env) {
		s.seed(3)
		fb := do[calendar.FreeBusy](t, e, "calendar_free_busy", `{"time_min":"2026-12-01T00:00:00Z","time_max":"2026-12-02T23:00:00Z","calendars":["primary","nobody@example.com"]}`, "")
		if len(fb.Calendars) != 2 || len(fb.Calendars[0].Busy) != 2 || !fb.Calendars[0].Busy[1].Start.Equal(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)) ||
			len(fb.Calendars[1].Errors) != 1 || fb.Calendars[1].Errors[0] != "notFound" {
			t.Fatalf("free/busy %+v", fb)
		}
	},
	"calendar_create_event": func(t *testing.T, s *standin, e *env) {
		ev := do[calendar.Event](t, e, "calendar_create_event", `{"summary":"1:1","start":"2026-12-07T09:30","end":"2026-12-07T10:00","time_zone":"Europe/Paris","attendees":["Bo <bo@example.com>"],"location":"Room 2","description":"agenda"}`, "op-create")
		if ev.Summary != "1:1" || !ev.Start.Equal(time.Date(2026, 12, 7, 8, 30, 0, 0, time.UTC)) || ev.TimeZone != "Europe/Paris" ||
			len(ev.Attendees) != 1 || ev.Attendees[0].Email != "bo@example.com" || ev.Attendees[0].Response != "needsAction" || ev.Location != "Room 2" {
			t.Fatalf("created %+v", ev)
		}
		day := do[calendar.Event](t, e, "calendar_create_event", `{"summary":"Holiday","start":"2026-12-24"}`, "op-day")
		if !day.AllDay || day.EndDate != "2026-12-25" {
			t.Fatalf("all day %+v", day)
		}
		l := do[saas.List[calendar.Event]](t, e, "calendar_list_events", `{"time_min":"2026-12-07T00:00:00Z","time_max":"2026-12-08T00:00:00Z"}`, "")
		if len(l.Items) != 1 || l.Items[0].Ref != ev.Ref {
			t.Fatalf("listed %+v", l.Items)
		}
	},
	"calendar_update_event": func(t *testing.T, s *standin, e *env) {
		s.seed(1)
		l := do[saas.List[calendar.Event]](t, e, "calendar_list_events", `{"time_min":"2026-11-01T00:00:00Z"}`, "")
		ev := do[calendar.Event](t, e, "calendar_update_event", fmt.Sprintf(`{"event":%q,"summary":"standup (moved)","start":"2026-12-01T11:00:00Z","end":"2026-12-01T11:15:00Z","description":""}`, l.Items[0].Ref), "op-up")
		if ev.Summary != "standup (moved)" || !ev.End.Equal(time.Date(2026, 12, 1, 11, 15, 0, 0, time.UTC)) || len(ev.Attendees) != 1 {
			t.Fatalf("updated %+v", ev)
		}
		ev = do[calendar.Event](t, e, "calendar_update_event", fmt.Sprintf(`{"event_id":%q,"attendees":["a@example.com","b@example.com"]}`, ev.ExternalID), "op-up2")
		if len(ev.Attendees) != 2 || ev.Summary != "standup (moved)" {
			t.Fatalf("attendees %+v", ev)
		}
	},
	"calendar_delete_event": func(t *testing.T, s *standin, e *env) {
		s.seed(2)
		l := do[saas.List[calendar.Event]](t, e, "calendar_list_events", `{"time_min":"2026-11-01T00:00:00Z"}`, "")
		d := do[calendar.Deleted](t, e, "calendar_delete_event", fmt.Sprintf(`{"event":%q,"notify":false}`, l.Items[0].Ref), "op-del")
		after := do[saas.List[calendar.Event]](t, e, "calendar_list_events", `{"time_min":"2026-11-01T00:00:00Z"}`, "")
		if !d.Deleted || d.Ref != l.Items[0].Ref || len(after.Items) != 1 || after.Items[0].Summary != "standup 1" {
			t.Fatalf("deleted %+v; left %+v", d, after.Items)
		}
		_, err := e.call(t, "calendar_delete_event", fmt.Sprintf(`{"event":%q}`, l.Items[0].Ref), "op-del-again")
		wantCode(t, err, legate.CodeNotFound)
	},
	"calendar_respond_to_event": func(t *testing.T, s *standin, e *env) {
		inv := s.invite()
		ev := do[calendar.Event](t, e, "calendar_respond_to_event", fmt.Sprintf(`{"event_id":%q,"response":"tentative","comment":"may be late"}`, inv.ID), "op-rsvp")
		s.mu.Lock()
		stored := inv.Attendees
		s.mu.Unlock()
		if len(ev.Attendees) != 2 || ev.Attendees[1].Response != "tentative" || !ev.Attendees[1].Self || stored[1].ResponseStatus != "tentative" ||
			stored[1].Comment != "may be late" || stored[0].ResponseStatus != "accepted" || ev.Organizer.ID != "ana@example.com" {
			t.Fatalf("answered %+v; stored %+v", ev, stored)
		}
		s.seed(1)
		own := s.add("primary", &sevent{Summary: "alone", Start: &edt{Date: "2026-12-10"}, End: &edt{Date: "2026-12-11"}})
		_, err := e.call(t, "calendar_respond_to_event", fmt.Sprintf(`{"event_id":%q,"response":"accepted"}`, own.ID), "op-rsvp2")
		wantCode(t, err, legate.CodeInvalidArgument)
	},
}

func TestEveryTool(t *testing.T) {
	for name, run := range toolCases {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			run(t, s, newEnv(t, s, 3))
		})
	}
}

func TestEveryToolHasACase(t *testing.T) {
	e := newEnv(t, newStandin(t), 3)
	for _, tool := range e.tools {
		if toolCases[tool.Name] == nil {
			t.Errorf("tool %s has no case in toolCases", tool.Name)
		}
		if tool.Toolset != calendar.Toolset || tool.OutputSchema == nil {
			t.Errorf("tool %s: toolset %q, output schema %v", tool.Name, tool.Toolset, tool.OutputSchema != nil)
		}
		if tool.Class != legate.ClassRead && !strings.HasSuffix(tool.Description, saas.OnceNote) {
			t.Errorf("write %s: its description does not end with saas.OnceNote", tool.Name)
		}
	}
	if len(e.tools) != len(toolCases) {
		t.Errorf("%d tools, %d cases", len(e.tools), len(toolCases))
	}
}

// Events are listed a page at a time by cursor, in start order, and a
// cursor is refused for another tenant or another listing without a
// request.
func TestListEventsWalksPages(t *testing.T) {
	s := newStandin(t)
	s.seed(8)
	e := newEnv(t, s, 3)
	var got []string
	cursor, pages := "", 0
	for {
		l := do[saas.List[calendar.Event]](t, e, "calendar_list_events", fmt.Sprintf(`{"time_min":"2026-12-01T00:00:00Z","limit":3,"cursor":%q}`, cursor), "")
		pages++
		for _, ev := range l.Items {
			got = append(got, ev.Summary)
		}
		if l.NextCursor == "" {
			break
		}
		if pages == 1 {
			before := s.counts["GET /calendar/v3/calendars/{cal}/events"]
			_, err := e.callAs(t, "t2", "calendar_list_events", fmt.Sprintf(`{"cursor":%q}`, l.NextCursor), "")
			wantCode(t, err, legate.CodeInvalidArgument)
			_, err = e.call(t, "calendar_list_events", fmt.Sprintf(`{"q":"x","cursor":%q}`, l.NextCursor), "")
			wantCode(t, err, legate.CodeInvalidArgument)
			if s.counts["GET /calendar/v3/calendars/{cal}/events"] != before {
				t.Fatal("a refused cursor reached Calendar")
			}
		}
		cursor = l.NextCursor
	}
	if pages != 3 || len(got) != 8 || got[0] != "standup 0" || got[7] != "standup 7" {
		t.Fatalf("%d pages: %v", pages, got)
	}
}

// An event or calendar Calendar does not have is NOT_FOUND, and the error
// names it; a ref of another tenant resolves to nothing.
func TestNotFoundNamesTheObject(t *testing.T) {
	s := newStandin(t)
	e := newEnv(t, s, 3)
	for tool, args := range map[string]string{
		"calendar_update_event":     `{"event_id":"nosuchevent","summary":"x"}`,
		"calendar_delete_event":     `{"event_id":"nosuchevent"}`,
		"calendar_respond_to_event": `{"event_id":"nosuchevent","response":"accepted"}`,
		"calendar_list_events":      `{"calendar_id":"nosuchevent@example.com"}`,
		"calendar_create_event":     `{"calendar_id":"nosuchevent@example.com","summary":"x","start":"2026-12-01"}`,
	} {
		_, err := e.call(t, tool, args, "op-"+tool)
		if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, "nosuchevent") {
			t.Errorf("%s: %q does not name the object", tool, le.Message)
		}
	}
	s.seed(1)
	l := do[saas.List[calendar.Event]](t, e, "calendar_list_events", `{"time_min":"2026-11-01T00:00:00Z"}`, "")
	_, err := e.callAs(t, "t2", "calendar_delete_event", fmt.Sprintf(`{"event":%q}`, l.Items[0].Ref), "op-x")
	wantCode(t, err, legate.CodeNotFound)
	if s.writeCount("delete") != 0 {
		t.Fatal("deleted for a refused ref")
	}
}

// Bad times and arguments are refused before any request.
func TestArgumentsAreChecked(t *testing.T) {
	s := newStandin(t)
	e := newEnv(t, s, 3)
	for name, args := range map[string]string{
		"no offset, no zone": `{"summary":"x","start":"2026-12-01T10:00","end":"2026-12-01T11:00"}`,
		"end before start":   `{"summary":"x","start":"2026-12-01T10:00:00Z","end":"2026-12-01T09:00:00Z"}`,
		"mixed kinds":        `{"summary":"x","start":"2026-12-01","end":"2026-12-01T09:00:00Z"}`,
		"timed without end":  `{"summary":"x","start":"2026-12-01T10:00:00Z"}`,
		"unknown zone":       `{"summary":"x","start":"2026-12-01T10:00","end":"2026-12-01T11:00","time_zone":"Mars/Olympus"}`,
		"bad attendee":       `{"summary":"x","start":"2026-12-01","attendees":["bob"]}`,
		"no summary":         `{"start":"2026-12-01"}`,
	} {
		_, err := e.call(t, "calendar_create_event", args, "op")
		if err == nil || legate.CodeOf(err) != legate.CodeInvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := e.call(t, "calendar_respond_to_event", `{"event_id":"abcde","response":"maybe"}`, "op")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = e.call(t, "calendar_free_busy", `{"time_min":"2026-12-02T00:00:00Z","time_max":"2026-12-01T00:00:00Z"}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = e.call(t, "calendar_create_event", `{"summary":"x","start":"2026-12-01"}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.counts) != 0 {
		t.Fatalf("requests sent: %v", s.counts)
	}
}

// Every tool says which scopes let it work: the connector asks for them.
func TestEveryToolHasScopes(t *testing.T) {
	tools := calendar.Tools{}
	scopes := tools.Scopes()
	for _, tool := range tools.List() {
		if len(scopes[tool.Name]) == 0 {
			t.Errorf("%s has no scopes", tool.Name)
		}
		delete(scopes, tool.Name)
	}
	for name := range scopes {
		t.Errorf("scopes of %s, which is no tool", name)
	}
}
