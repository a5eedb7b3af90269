package calendar

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"

	cal "google.golang.org/api/calendar/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

type createEventIn struct {
	calendarArg
	Summary     string   `json:"summary" jsonschema:"the event's title"`
	Start       string   `json:"start" jsonschema:"when it starts: 2026-12-03T10:00:00+01:00, or 2026-12-03T10:00:00 with time_zone, or 2026-12-03 for an all-day event"`
	End         string   `json:"end,omitempty" jsonschema:"when it ends, in the form of start; an all-day event's end is the day after its last (2026-12-04 for one day, the default); required for a timed event"`
	TimeZone    string   `json:"time_zone,omitempty" jsonschema:"IANA time zone of start and end, e.g. Europe/Paris: needed when they carry no offset, and what recurring and all-day events follow"`
	Attendees   []string `json:"attendees,omitempty" jsonschema:"guests' e-mail addresses"`
	Description string   `json:"description,omitempty"`
	Location    string   `json:"location,omitempty"`
	Notify      *bool    `json:"notify,omitempty" jsonschema:"e-mail the attendees the invitation (the default); false adds them silently"`
}

type updateEventIn struct {
	eventArg
	Summary     *string   `json:"summary,omitempty"`
	Description *string   `json:"description,omitempty"`
	Location    *string   `json:"location,omitempty"`
	Start       string    `json:"start,omitempty" jsonschema:"a new start, in the forms calendar_create_event takes; give end with it"`
	End         string    `json:"end,omitempty"`
	TimeZone    string    `json:"time_zone,omitempty"`
	Attendees   *[]string `json:"attendees,omitempty" jsonschema:"the guests' e-mail addresses, replacing the list"`
	Notify      *bool     `json:"notify,omitempty" jsonschema:"e-mail the attendees the change (the default)"`
}

type deleteEventIn struct {
	eventArg
	Notify *bool `json:"notify,omitempty" jsonschema:"e-mail the attendees the cancellation (the default)"`
}

type respondIn struct {
	eventArg
	Response string `json:"response" jsonschema:"accepted, declined or tentative"`
	Comment  string `json:"comment,omitempty" jsonschema:"a note to the organizer"`
}

// Deleted is the result of a deletion.
type Deleted struct {
	Ref        string `json:"ref"`
	ExternalID string `json:"external_id"`
	Deleted    bool   `json:"deleted"`
}

var (
	datePattern  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	localPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$`)
)

// moment is a start or end as given, checked.
type moment struct {
	dt  *cal.EventDateTime
	at  time.Time // its instant; for a date, midnight UTC
	day bool
}

// momentOf reads a start or end in one of the forms the tools take.
func momentOf(field, s, tz string) (moment, error) {
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil || tz == "Local" {
			return moment{}, legate.Errorf(legate.CodeInvalidArgument, "google: time_zone: not an IANA time zone: %q", tz)
		}
		loc = l
	}
	switch {
	case datePattern.MatchString(s):
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			break
		}
		return moment{dt: &cal.EventDateTime{Date: s, TimeZone: tz}, at: d, day: true}, nil
	case localPattern.MatchString(s):
		if tz == "" {
			return moment{}, legate.Errorf(legate.CodeInvalidArgument, "google: %s: %q has no offset; give time_zone, or an offset (+01:00, Z)", field, s)
		}
		if len(s) == 16 {
			s += ":00"
		}
		v, err := time.ParseInLocation("2006-01-02T15:04:05", s, loc)
		if err != nil {
			break
		}
		return moment{dt: &cal.EventDateTime{DateTime: s, TimeZone: tz}, at: v}, nil
	default:
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			break
		}
		return moment{dt: &cal.EventDateTime{DateTime: s, TimeZone: tz}, at: v}, nil
	}
	return moment{}, legate.Errorf(legate.CodeInvalidArgument, "google: %s: a date-time (2026-12-03T10:00:00+01:00, or without offset with time_zone) or a date (2026-12-03), got %q", field, s)
}

// span checks a start and end: of one kind, the end after the start. An
// all-day event's end defaults to the next day.
func span(start, end, tz string) (moment, moment, error) {
	s, err := momentOf("start", start, tz)
	if err != nil {
		return moment{}, moment{}, err
	}
	if end == "" {
		if !s.day {
			return moment{}, moment{}, legate.Errorf(legate.CodeInvalidArgument, "google: end: required for an event with a start time")
		}
		end = s.at.AddDate(0, 0, 1).Format(time.DateOnly)
	}
	e, err := momentOf("end", end, tz)
	switch {
	case err != nil:
		return moment{}, moment{}, err
	case s.day != e.day:
		return moment{}, moment{}, legate.Errorf(legate.CodeInvalidArgument, "google: start and end: both dates (all day) or both date-times")
	case !e.at.After(s.at):
		return moment{}, moment{}, legate.Errorf(legate.CodeInvalidArgument, "google: end: must be after start")
	}
	return s, e, nil
}

func attendees(list []string) ([]*cal.EventAttendee, error) {
	if len(list) > maxAttendees {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: attendees: at most %d", maxAttendees)
	}
	out := []*cal.EventAttendee{}
	for i, s := range list {
		a, err := mail.ParseAddress(s)
		if err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: attendees[%d]: not an e-mail address: %q", i, s)
		}
		out = append(out, &cal.EventAttendee{Email: a.Address, DisplayName: a.Name})
	}
	return out, nil
}

func checkText(field, s string) error {
	if len(s) > maxText {
		return legate.Errorf(legate.CodeInvalidArgument, "google: %s: at most %d bytes", field, maxText)
	}
	return nil
}

func sendUpdates(notify *bool) string {
	if notify == nil || *notify {
		return "all"
	}
	return "none"
}

// eventIDOf is the id of the event the call with marker creates: base32hex
// as Calendar asks ([a-v0-9]), from the marker, the same for every retry.
func eventIDOf(marker string) string {
	sum := sha256.Sum256([]byte("calendar event\x00" + marker))
	return hex.EncodeToString(sum[:20])
}

// result is an event tool's result.
func result(verb string, e *Event) *legate.Result {
	return &legate.Result{Structured: e, Text: verb + " " + eventLine(*e)}
}

func (t Tools) createEvent(ctx context.Context, call *connectors.Call, in *createEventIn) (*legate.Result, error) {
	calID, err := t.calendarID(call, in.calendarArg)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Summary) == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: summary: the event needs a title")
	}
	for f, v := range map[string]string{"summary": in.Summary, "description": in.Description, "location": in.Location} {
		if err := checkText(f, v); err != nil {
			return nil, err
		}
	}
	start, end, err := span(in.Start, in.End, in.TimeZone)
	if err != nil {
		return nil, err
	}
	guests, err := attendees(in.Attendees)
	if err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[Event]{
		// The event's id is the call's: a repeated insert is refused with
		// 409, and the event read instead. No Find: sending again is safe.
		Send: func(ctx context.Context, token, marker string) (*Event, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			id := eventIDOf(marker)
			ev := &cal.Event{Id: id, Summary: in.Summary, Description: in.Description, Location: in.Location, Start: start.dt, End: end.dt, Attendees: guests}
			created, err := s.Events.Insert(calID, ev).SendUpdates(sendUpdates(in.Notify)).Context(ctx).Do()
			if status(err) == http.StatusConflict {
				created, err = s.Events.Get(calID, id).Context(ctx).Do()
			}
			if err != nil {
				return nil, t.about(ctx, err, "calendar "+calID)
			}
			e, err := t.eventOf(call, calID, created)
			return &e, err
		},
	})
	if err != nil {
		return nil, err
	}
	return result("created", out), nil
}

func (t Tools) updateEvent(ctx context.Context, call *connectors.Call, in *updateEventIn) (*legate.Result, error) {
	calID, evID, err := t.eventID(call, in.eventArg)
	if err != nil {
		return nil, err
	}
	patch := &cal.Event{}
	for _, f := range []struct {
		name string
		v    *string
		set  *string
	}{{"Summary", in.Summary, &patch.Summary}, {"Description", in.Description, &patch.Description}, {"Location", in.Location, &patch.Location}} {
		if f.v == nil {
			continue
		}
		if err := checkText(strings.ToLower(f.name), *f.v); err != nil {
			return nil, err
		}
		*f.set = *f.v
		patch.ForceSendFields = append(patch.ForceSendFields, f.name) // "" clears it
	}
	var start, end moment
	if in.Start != "" || in.End != "" {
		if in.Start == "" || in.End == "" {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: start and end: give both to move the event")
		}
		if start, end, err = span(in.Start, in.End, in.TimeZone); err != nil {
			return nil, err
		}
		patch.Start, patch.End = start.dt, end.dt
	}
	if in.Attendees != nil {
		if patch.Attendees, err = attendees(*in.Attendees); err != nil {
			return nil, err
		}
		patch.ForceSendFields = append(patch.ForceSendFields, "Attendees")
	}
	if len(patch.ForceSendFields) == 0 && patch.Start == nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: give a field to change")
	}
	what := "event " + evID
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[Event]{
		Send: func(ctx context.Context, token, _ string) (*Event, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			ev, err := s.Events.Patch(calID, evID, patch).SendUpdates(sendUpdates(in.Notify)).Context(ctx).Do()
			if err != nil {
				return nil, t.about(ctx, err, what)
			}
			e, err := t.eventOf(call, calID, ev)
			return &e, err
		},
		// The fields are a state: read back, they say whether an attempt
		// whose answer was lost set them.
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Event, error) {
			e, err := t.current(ctx, call, token, calID, evID)
			if err != nil || !patched(e, in, start, end) {
				return nil, err
			}
			return e, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return result("updated", out), nil
}

// current reads an event for a reconciling Find.
func (t Tools) current(ctx context.Context, call *connectors.Call, token, calID, evID string) (*Event, error) {
	s, err := t.service(ctx, token)
	if err != nil {
		return nil, err
	}
	ev, err := s.Events.Get(calID, evID).Context(ctx).Do()
	if err != nil {
		return nil, t.about(ctx, err, "event "+evID)
	}
	e, err := t.eventOf(call, calID, ev)
	return &e, err
}

// patched says that e holds what in sets.
func patched(e *Event, in *updateEventIn, start, end moment) bool {
	same := func(want *string, got string) bool { return want == nil || *want == got }
	if !same(in.Summary, e.Summary) || !same(in.Description, e.Description) || !same(in.Location, e.Location) {
		return false
	}
	if start.dt != nil {
		if start.day && (e.StartDate != start.dt.Date || e.EndDate != end.dt.Date) || !start.day && (!e.Start.Equal(start.at) || !e.End.Equal(end.at)) {
			return false
		}
	}
	if in.Attendees != nil {
		want, _ := attendees(*in.Attendees)
		var a, b []string
		for _, x := range want {
			a = append(a, strings.ToLower(x.Email))
		}
		for _, x := range e.Attendees {
			b = append(b, strings.ToLower(x.Email))
		}
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	}
	return true
}

func (t Tools) deleteEvent(ctx context.Context, call *connectors.Call, in *deleteEventIn) (*legate.Result, error) {
	calID, evID, err := t.eventID(call, in.eventArg)
	if err != nil {
		return nil, err
	}
	deleted := &Deleted{Ref: t.Kit.Ref(call, kindEvent, calID+"\n"+evID), ExternalID: evID, Deleted: true}
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[Deleted]{
		Send: func(ctx context.Context, token, _ string) (*Deleted, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			err = s.Events.Delete(calID, evID).SendUpdates(sendUpdates(in.Notify)).Context(ctx).Do()
			if status(err) == http.StatusGone {
				return nil, legate.Errorf(legate.CodeNotFound, "google: calendar: event %s was deleted already", evID)
			}
			if err != nil {
				return nil, t.about(ctx, err, "event "+evID)
			}
			return deleted, nil
		},
		// A deleted event reads back as cancelled.
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Deleted, error) {
			e, err := t.current(ctx, call, token, calID, evID)
			if err != nil || e.Status != "cancelled" {
				return nil, err
			}
			return deleted, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "deleted event " + evID}, nil
}

var responses = []string{"accepted", "declined", "tentative"}

func (t Tools) respond(ctx context.Context, call *connectors.Call, in *respondIn) (*legate.Result, error) {
	calID, evID, err := t.eventID(call, in.eventArg)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(responses, in.Response) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: response: one of %s, got %q", strings.Join(responses, ", "), in.Response)
	}
	if err := checkText("comment", in.Comment); err != nil {
		return nil, err
	}
	answered := func(e *Event) bool {
		i := slices.IndexFunc(e.Attendees, func(a Attendee) bool { return a.Self })
		return i >= 0 && e.Attendees[i].Response == in.Response && (in.Comment == "" || e.Attendees[i].Comment == in.Comment)
	}
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[Event]{
		Send: func(ctx context.Context, token, _ string) (*Event, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			ev, err := s.Events.Get(calID, evID).Context(ctx).Do()
			if err != nil {
				return nil, t.about(ctx, err, "event "+evID)
			}
			i := slices.IndexFunc(ev.Attendees, func(a *cal.EventAttendee) bool { return a != nil && a.Self })
			if i < 0 {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "google: calendar: the account is not among the attendees of event %s; only an invitation can be answered", evID)
			}
			ev.Attendees[i].ResponseStatus = in.Response
			if in.Comment != "" {
				ev.Attendees[i].Comment = in.Comment
			}
			patched, err := s.Events.Patch(calID, evID, &cal.Event{Attendees: ev.Attendees}).SendUpdates("all").Context(ctx).Do()
			if err != nil {
				return nil, t.about(ctx, err, "event "+evID)
			}
			e, err := t.eventOf(call, calID, patched)
			return &e, err
		},
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Event, error) {
			e, err := t.current(ctx, call, token, calID, evID)
			if err != nil || !answered(e) {
				return nil, err
			}
			return e, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return result(fmt.Sprintf("answered %s:", in.Response), out), nil
}
