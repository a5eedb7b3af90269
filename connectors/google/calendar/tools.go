package calendar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	cal "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Toolset is the name of the toolset of every tool here.
const Toolset = "calendar"

// Bounds of the tools.
const (
	// DefaultEvents and MaxEvents are list_events' page sizes.
	DefaultEvents, MaxEvents = 50, 250
	// DefaultCalendars and MaxCalendars are list_calendars' page sizes.
	DefaultCalendars, MaxCalendars = 100, 250
	// MaxFreeBusyCalendars bounds the calendars of one free/busy query
	// (Google's own limit is 50).
	MaxFreeBusyCalendars = 50
	// maxAttendees bounds an event's attendees.
	maxAttendees = 200
	// maxText bounds a summary, a location and a description.
	maxText = 8000
)

// Kinds of the refs the tools hand out.
const (
	kindCalendar = "calendar"
	kindEvent    = "event"
)

// Deps is what the tools need from the connector.
type Deps struct {
	// Kit runs every call: retries, refs, cursors, writes at most once.
	Kit *saas.Kit
	// Client returns an HTTP client that sends token, the access token the
	// kit handed the attempt (saas.Options.Exchange), to Google.
	Client func(ctx context.Context, token string) (*http.Client, error)
	// BaseURL is the Calendar API's base URL with its version,
	// https://www.googleapis.com/calendar/v3/.
	BaseURL string
	// MapError makes an error of Google's client canonical (googleapi's
	// errors by status and reason): the connector's, gcore.MapError.
	MapError func(ctx context.Context, err error) error
}

// Tools are the tools of the calendar toolset.
type Tools struct{ Deps }

func inToolset(t connectors.Tool) connectors.Tool {
	t.Toolset = Toolset
	return t
}

// List returns the tools, each in the calendar toolset.
func (t Tools) List() []connectors.Tool {
	tools := []connectors.Tool{
		connectors.Returning[saas.List[Calendar]](connectors.NewTool("calendar_list_calendars",
			fmt.Sprintf("List the calendars the account has in its list (its own, shared ones, subscriptions), with their ids, time zones and its access to each; a page at a time: limit (default %d, at most %d) and cursor.", DefaultCalendars, MaxCalendars),
			legate.ClassRead, t.listCalendars)),
		connectors.Returning[saas.List[Event]](connectors.NewTool("calendar_list_events",
			fmt.Sprintf("List the events of a calendar (the primary one by default) in a time window (time_min, time_max, RFC 3339), by start time, recurring events expanded into their occurrences; optionally matching text (q). A page at a time: limit (default %d, at most %d) and cursor.", DefaultEvents, MaxEvents),
			legate.ClassRead, t.listEvents)),
		connectors.Returning[FreeBusy](connectors.NewTool("calendar_free_busy",
			fmt.Sprintf("When are people or calendars busy between time_min and time_max: the busy intervals of each calendar id or e-mail address (at most %d; the primary calendar by default). Free time is what lies between.", MaxFreeBusyCalendars),
			legate.ClassRead, t.freeBusy)),
		connectors.Returning[Event](connectors.NewTool("calendar_create_event",
			"Create an event: summary, start and end (a date-time with its offset, or one without and time_zone; a date alone, 2026-12-24, for an all-day event), attendees by e-mail (invited by Google's e-mail unless notify is false), description, location. Returns the event. "+saas.OnceNote,
			legate.ClassWrite, t.createEvent)),
		connectors.Returning[Event](connectors.NewTool("calendar_update_event",
			"Change an event: only the fields given (summary, description, location, start, end, time_zone, attendees, which replaces the list). Returns the event as it now is. "+saas.OnceNote,
			legate.ClassWrite, t.updateEvent)),
		connectors.Returning[Deleted](connectors.NewTool("calendar_delete_event",
			"Delete an event (cancelled for its attendees, told by e-mail unless notify is false). "+saas.OnceNote,
			legate.ClassDestructive, t.deleteEvent)),
		connectors.Returning[Event](connectors.NewTool("calendar_respond_to_event",
			"Answer an invitation as the account: accepted, declined or tentative, with an optional comment; the organizer is told. Returns the event. "+saas.OnceNote,
			legate.ClassWrite, t.respond)),
	}
	for i := range tools {
		tools[i] = inToolset(tools[i])
	}
	return tools
}

// service returns the Calendar client of an attempt sending token.
func (t Tools) service(ctx context.Context, token string) (*cal.Service, error) {
	hc, err := t.Client(ctx, token)
	if err != nil {
		return nil, err
	}
	s, err := cal.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(t.BaseURL), option.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: calendar base URL: %v", err)
	}
	return s, nil
}

// read runs fn, one request that changes nothing, with a client.
func (t Tools) read(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, s *cal.Service) error) error {
	return t.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		s, err := t.service(ctx, token)
		if err != nil {
			return err
		}
		return fn(ctx, s)
	})
}

// mapErr makes err canonical with the connector's MapError.
func (t Tools) mapErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return t.MapError(ctx, err)
}

// about makes err canonical and, when it is NOT_FOUND, names what was not
// found.
func (t Tools) about(ctx context.Context, err error, what string) error {
	err = t.mapErr(ctx, err)
	var le *legate.Error
	if errors.As(err, &le) && le.Code == legate.CodeNotFound {
		return &legate.Error{Code: legate.CodeNotFound, Err: err,
			Message: "google: calendar: " + what + " was not found: deleted, or not visible to this account; list again for its ref"}
	}
	return err
}

// status is the HTTP status of a Google error, 0 for another error.
func status(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

// calendarArg names a calendar by ref or id; the primary one by default.
type calendarArg struct {
	Calendar   string `json:"calendar,omitempty" jsonschema:"ref of the calendar, from calendar_list_calendars; or give calendar_id"`
	CalendarID string `json:"calendar_id,omitempty" jsonschema:"the calendar's id (an e-mail address for a person's calendar), instead of calendar; primary, the account's own, when neither is given"`
}

func (t Tools) calendarID(call *connectors.Call, a calendarArg) (string, error) {
	switch {
	case a.Calendar != "" && a.CalendarID != "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: give calendar or calendar_id, not both")
	case a.Calendar != "":
		return t.Kit.Resolve(call, kindCalendar, a.Calendar)
	case a.CalendarID == "":
		return "primary", nil
	}
	return checkID("calendar_id", a.CalendarID)
}

func checkID(field, id string) (string, error) {
	// Not a path: '#' is allowed, holiday calendars' ids hold it.
	if len(id) > 1024 || strings.ContainsAny(id, "/?%\\ \t\r\n'\"") {
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: %s: not a Calendar id: %q", field, id)
	}
	return id, nil
}

// eventArg names an event by ref, or by calendar and id.
type eventArg struct {
	Event      string `json:"event,omitempty" jsonschema:"ref of the event, from calendar_list_events or calendar_create_event; or give event_id (and calendar_id)"`
	EventID    string `json:"event_id,omitempty" jsonschema:"the event's id, instead of event"`
	CalendarID string `json:"calendar_id,omitempty" jsonschema:"the calendar of event_id; primary by default"`
}

// eventID resolves an event to its calendar and id.
func (t Tools) eventID(call *connectors.Call, a eventArg) (string, string, error) {
	switch {
	case a.Event != "" && (a.EventID != "" || a.CalendarID != ""):
		return "", "", legate.Errorf(legate.CodeInvalidArgument, "google: give event, or event_id and calendar_id, not both")
	case a.Event != "":
		id, err := t.Kit.Resolve(call, kindEvent, a.Event)
		if err != nil {
			return "", "", err
		}
		calID, evID, ok := strings.Cut(id, "\n")
		if !ok {
			return "", "", legate.Errorf(legate.CodeNotFound, "google: event: not an event ref of this connector")
		}
		return calID, evID, nil
	case a.EventID == "":
		return "", "", legate.Errorf(legate.CodeInvalidArgument, "google: give event (a ref) or event_id")
	}
	calID := a.CalendarID
	if calID == "" {
		calID = "primary"
	}
	if _, err := checkID("calendar_id", calID); err != nil {
		return "", "", err
	}
	evID, err := checkID("event_id", a.EventID)
	return calID, evID, err
}

// Scopes are, per tool, the OAuth scopes (after
// https://www.googleapis.com/auth/) any one of which lets it work, the one
// to ask for first.
func (t Tools) Scopes() map[string][]string {
	read := []string{"calendar.readonly", "calendar.events.readonly", "calendar.events", "calendar"}
	write := []string{"calendar.events", "calendar"}
	return map[string][]string{"calendar_list_calendars": {"calendar.readonly", "calendar.calendarlist.readonly", "calendar"},
		"calendar_list_events": read, "calendar_free_busy": append([]string{"calendar.freebusy"}, read...),
		"calendar_create_event": write, "calendar_update_event": write, "calendar_delete_event": write, "calendar_respond_to_event": write}
}
