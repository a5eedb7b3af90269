package calendar

import (
	"context"
	"fmt"
	"strings"
	"time"

	cal "google.golang.org/api/calendar/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Calendar is a calendar of the account's list.
type Calendar struct {
	model.Object
	Summary     string `json:"summary"`
	Description string `json:"description,omitempty"`
	TimeZone    string `json:"time_zone,omitempty" jsonschema:"IANA time zone, e.g. Europe/Paris"`
	Primary     bool   `json:"primary,omitempty" jsonschema:"the account's own calendar"`
	AccessRole  string `json:"access_role,omitempty" jsonschema:"the account's access: owner, writer, reader or freeBusyReader"`
}

// Event is a calendar event.
type Event struct {
	model.Object
	CalendarRef string        `json:"calendar_ref,omitempty" jsonschema:"ref of the calendar holding it"`
	Summary     string        `json:"summary"`
	Description string        `json:"description,omitempty"`
	Location    string        `json:"location,omitempty"`
	Start       time.Time     `json:"start,omitzero" jsonschema:"when it starts, UTC; absent for an all-day event (see start_date)"`
	End         time.Time     `json:"end,omitzero" jsonschema:"when it ends, UTC; absent for an all-day event (see end_date)"`
	StartDate   string        `json:"start_date,omitempty" jsonschema:"an all-day event's first day, YYYY-MM-DD"`
	EndDate     string        `json:"end_date,omitempty" jsonschema:"an all-day event's end, the day after its last, YYYY-MM-DD"`
	AllDay      bool          `json:"all_day,omitempty"`
	TimeZone    string        `json:"time_zone,omitempty" jsonschema:"the time zone the event was set in, when given"`
	Status      string        `json:"status,omitempty" jsonschema:"confirmed, tentative or cancelled (deleted)"`
	Organizer   *model.Person `json:"organizer,omitempty" jsonschema:"id is the organizer's e-mail address"`
	Attendees   []Attendee    `json:"attendees,omitempty"`
	CreatedAt   time.Time     `json:"created_at,omitzero"`
	UpdatedAt   time.Time     `json:"updated_at,omitzero"`
}

// Attendee is a guest of an event.
type Attendee struct {
	Email    string `json:"email"`
	Name     string `json:"name,omitempty"`
	Response string `json:"response,omitempty" jsonschema:"needsAction, accepted, declined or tentative"`
	Optional bool   `json:"optional,omitempty"`
	Self     bool   `json:"self,omitempty" jsonschema:"the account itself"`
	Comment  string `json:"comment,omitempty"`
}

// FreeBusy is the busy time of calendars in a window.
type FreeBusy struct {
	TimeMin   time.Time      `json:"time_min"`
	TimeMax   time.Time      `json:"time_max"`
	Calendars []CalendarBusy `json:"calendars"`
}

// CalendarBusy is one calendar's busy time.
type CalendarBusy struct {
	ID     string     `json:"id" jsonschema:"the calendar id or e-mail address asked for"`
	Busy   []Interval `json:"busy"`
	Errors []string   `json:"errors,omitempty" jsonschema:"why Google could not tell: notFound, or a calendar whose free/busy the account may not see"`
}

// Interval is a span of time.
type Interval struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

type listCalendarsIn struct {
	saas.Page
}

type listEventsIn struct {
	calendarArg
	saas.Page
	TimeMin      string `json:"time_min,omitempty" jsonschema:"only events ending after this time, RFC 3339: 2026-12-01T00:00:00Z; now by default"`
	TimeMax      string `json:"time_max,omitempty" jsonschema:"only events starting before this time, RFC 3339"`
	Q            string `json:"q,omitempty" jsonschema:"only events with this text in their summary, description, location or attendees"`
	SingleEvents *bool  `json:"single_events,omitempty" jsonschema:"expand recurring events into their occurrences, ordered by start (the default); false lists each series once"`
}

type freeBusyIn struct {
	TimeMin   string   `json:"time_min" jsonschema:"the window's start, RFC 3339"`
	TimeMax   string   `json:"time_max" jsonschema:"the window's end, RFC 3339"`
	Calendars []string `json:"calendars,omitempty" jsonschema:"calendar ids or people's e-mail addresses; the account's primary calendar when empty"`
}

func (t Tools) listCalendars(ctx context.Context, call *connectors.Call, in *listCalendarsIn) (*legate.Result, error) {
	p, err := t.Kit.Open(call, in.Page, DefaultCalendars, MaxCalendars)
	if err != nil {
		return nil, err
	}
	var out saas.List[Calendar]
	err = t.read(ctx, call, func(ctx context.Context, s *cal.Service) error {
		req := s.CalendarList.List().MaxResults(int64(p.Size))
		if p.Token != "" {
			req = req.PageToken(p.Token)
		}
		list, err := req.Context(ctx).Do()
		if err != nil {
			return t.mapErr(ctx, err)
		}
		items, err := saas.Convert(list.Items, func(c *cal.CalendarListEntry) (Calendar, error) {
			if c == nil || c.Id == "" {
				return Calendar{}, saas.Mapping("google", "a calendar without an id")
			}
			summary := c.SummaryOverride
			if summary == "" {
				summary = c.Summary
			}
			return Calendar{Object: t.Kit.Object(call, "calendar", kindCalendar, c.Id), Summary: summary, Description: c.Description,
				TimeZone: c.TimeZone, Primary: c.Primary, AccessRole: c.AccessRole}, nil
		})
		out = saas.ListOf(t.Kit, call, items, list.NextPageToken)
		return err
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d calendar(s)", len(out.Items))
	for _, c := range out.Items {
		fmt.Fprintf(&b, "\n%s (id %s, %s, %s) ref %s", c.Summary, c.ExternalID, c.AccessRole, c.TimeZone, c.Ref)
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// instant parses an RFC 3339 time argument.
func instant(field, s string) (time.Time, error) {
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, legate.Errorf(legate.CodeInvalidArgument, "google: %s: an RFC 3339 time with its offset, like 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00, got %q", field, s)
	}
	return v, nil
}

func (t Tools) listEvents(ctx context.Context, call *connectors.Call, in *listEventsIn) (*legate.Result, error) {
	calID, err := t.calendarID(call, in.calendarArg)
	if err != nil {
		return nil, err
	}
	timeMin := time.Now().UTC().Format(time.RFC3339)
	if in.TimeMin != "" {
		if _, err := instant("time_min", in.TimeMin); err != nil {
			return nil, err
		}
		timeMin = in.TimeMin
	}
	if in.TimeMax != "" {
		if _, err := instant("time_max", in.TimeMax); err != nil {
			return nil, err
		}
	}
	single := in.SingleEvents == nil || *in.SingleEvents
	p, err := t.Kit.Open(call, in.Page, DefaultEvents, MaxEvents)
	if err != nil {
		return nil, err
	}
	// A cursor is bound to the listing it continues; time_min is fixed
	// in it, so that "now" does not move under the pages.
	bound := fmt.Sprintf("%s\n%s\n%t\n%s", calID, in.TimeMax, single, in.Q)
	pageToken := ""
	if p.Token != "" {
		parts := strings.SplitN(p.Token, "\n", 3)
		if len(parts) != 3 || parts[2] != bound || in.TimeMin != "" && in.TimeMin != parts[1] {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: cursor: it continues another listing; give the same calendar, time_max, q and single_events")
		}
		pageToken, timeMin = parts[0], parts[1]
	}
	var out saas.List[Event]
	err = t.read(ctx, call, func(ctx context.Context, s *cal.Service) error {
		req := s.Events.List(calID).MaxResults(int64(p.Size)).TimeMin(timeMin).SingleEvents(single)
		if single {
			req = req.OrderBy("startTime")
		}
		if in.TimeMax != "" {
			req = req.TimeMax(in.TimeMax)
		}
		if in.Q != "" {
			req = req.Q(in.Q)
		}
		if pageToken != "" {
			req = req.PageToken(pageToken)
		}
		list, err := req.Context(ctx).Do()
		if err != nil {
			return t.about(ctx, err, "calendar "+calID)
		}
		items, err := saas.Convert(list.Items, func(e *cal.Event) (Event, error) { return t.eventOf(call, calID, e) })
		next := ""
		if list.NextPageToken != "" {
			next = list.NextPageToken + "\n" + timeMin + "\n" + bound
		}
		out = saas.ListOf(t.Kit, call, items, next)
		return err
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d event(s)", len(out.Items))
	for _, e := range out.Items {
		b.WriteString("\n" + eventLine(e))
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (t Tools) freeBusy(ctx context.Context, call *connectors.Call, in *freeBusyIn) (*legate.Result, error) {
	lo, err := instant("time_min", in.TimeMin)
	if err != nil {
		return nil, err
	}
	hi, err := instant("time_max", in.TimeMax)
	if err != nil {
		return nil, err
	}
	if !hi.After(lo) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: time_max: must be after time_min")
	}
	ids := in.Calendars
	if len(ids) == 0 {
		ids = []string{"primary"}
	}
	if len(ids) > MaxFreeBusyCalendars {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: calendars: at most %d, got %d", MaxFreeBusyCalendars, len(ids))
	}
	req := &cal.FreeBusyRequest{TimeMin: in.TimeMin, TimeMax: in.TimeMax}
	for i, id := range ids {
		if _, err := checkID(fmt.Sprintf("calendars[%d]", i), id); err != nil || id == "" {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: calendars[%d]: a calendar id or an e-mail address, got %q", i, id)
		}
		req.Items = append(req.Items, &cal.FreeBusyRequestItem{Id: id})
	}
	out := FreeBusy{TimeMin: lo.UTC(), TimeMax: hi.UTC()}
	err = t.read(ctx, call, func(ctx context.Context, s *cal.Service) error {
		resp, err := s.Freebusy.Query(req).Context(ctx).Do()
		if err != nil {
			return t.mapErr(ctx, err)
		}
		out.Calendars = out.Calendars[:0]
		for _, id := range ids {
			fb, ok := resp.Calendars[id]
			c := CalendarBusy{ID: id, Busy: []Interval{}}
			if !ok {
				c.Errors = []string{"not in Google's answer"}
			}
			for _, e := range fb.Errors {
				c.Errors = append(c.Errors, e.Reason)
			}
			for _, b := range fb.Busy {
				start, err1 := time.Parse(time.RFC3339, b.Start)
				end, err2 := time.Parse(time.RFC3339, b.End)
				if err1 != nil || err2 != nil {
					return saas.Mapping("google", "a busy interval %q–%q is not RFC 3339", b.Start, b.End)
				}
				c.Busy = append(c.Busy, Interval{Start: start.UTC(), End: end.UTC()})
			}
			out.Calendars = append(out.Calendars, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "busy between %s and %s:", out.TimeMin.Format(time.RFC3339), out.TimeMax.Format(time.RFC3339))
	for _, c := range out.Calendars {
		fmt.Fprintf(&b, "\n%s:", c.ID)
		for _, i := range c.Busy {
			fmt.Fprintf(&b, " %s–%s", i.Start.Format("Jan 2 15:04"), i.End.Format("15:04"))
		}
		if len(c.Busy) == 0 && len(c.Errors) == 0 {
			b.WriteString(" free")
		}
		if len(c.Errors) > 0 {
			fmt.Fprintf(&b, " unknown (%s)", strings.Join(c.Errors, ", "))
		}
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// eventOf converts an event of calendar calID.
func (t Tools) eventOf(call *connectors.Call, calID string, e *cal.Event) (Event, error) {
	if e == nil || e.Id == "" {
		return Event{}, saas.Mapping("google", "an event without an id")
	}
	out := Event{Object: t.Kit.Object(call, "event", kindEvent, calID+"\n"+e.Id), CalendarRef: t.Kit.Ref(call, kindCalendar, calID),
		Summary: e.Summary, Description: e.Description, Location: e.Location, Status: e.Status}
	out.ExternalID, out.URL = e.Id, e.HtmlLink
	var err error
	if out.Start, out.StartDate, err = when(e.Start); err != nil {
		return Event{}, err
	}
	if out.End, out.EndDate, err = when(e.End); err != nil {
		return Event{}, err
	}
	out.AllDay = out.StartDate != ""
	if e.Start != nil {
		out.TimeZone = e.Start.TimeZone
	}
	if o := e.Organizer; o != nil {
		out.Organizer = &model.Person{ID: o.Email, Name: o.DisplayName}
	}
	for _, a := range e.Attendees {
		if a != nil {
			out.Attendees = append(out.Attendees, Attendee{Email: a.Email, Name: a.DisplayName, Response: a.ResponseStatus, Optional: a.Optional, Self: a.Self, Comment: a.Comment})
		}
	}
	out.CreatedAt, _ = time.Parse(time.RFC3339, e.Created)
	out.UpdatedAt, _ = time.Parse(time.RFC3339, e.Updated)
	out.CreatedAt, out.UpdatedAt = out.CreatedAt.UTC(), out.UpdatedAt.UTC()
	meta := map[string]any{"calendar_id": calID}
	if e.RecurringEventId != "" {
		meta["recurring_event_id"] = e.RecurringEventId
	}
	if e.HangoutLink != "" {
		meta["hangout_link"] = e.HangoutLink
	}
	if e.ICalUID != "" {
		meta["ical_uid"] = e.ICalUID
	}
	out.ProviderMetadata = meta
	return out, nil
}

// when reads an event's start or end: a time, or an all-day date.
func when(d *cal.EventDateTime) (time.Time, string, error) {
	switch {
	case d == nil:
		return time.Time{}, "", nil
	case d.Date != "":
		return time.Time{}, d.Date, nil
	case d.DateTime == "":
		return time.Time{}, "", nil
	}
	v, err := time.Parse(time.RFC3339, d.DateTime)
	if err != nil {
		return time.Time{}, "", saas.Mapping("google", "an event time %q is not RFC 3339", d.DateTime)
	}
	return v.UTC(), "", nil
}

// eventLine is an event in one line.
func eventLine(e Event) string {
	span := e.StartDate + " (all day)"
	if !e.AllDay {
		span = e.Start.Format("2006-01-02 15:04") + "–" + e.End.Format("15:04") + " UTC"
	}
	s := fmt.Sprintf("%s  %s", span, e.Summary)
	if e.Location != "" {
		s += " @ " + e.Location
	}
	if e.Status != "" && e.Status != "confirmed" {
		s += " [" + e.Status + "]"
	}
	for _, a := range e.Attendees {
		if a.Self {
			s += " (you: " + a.Response + ")"
		}
	}
	return s + " ref " + e.Ref
}
