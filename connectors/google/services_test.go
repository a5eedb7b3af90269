package google_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
)

// Gmail and Calendar (whose tools their packages test against their own
// stand-ins) reach their APIs through the connector's core: at gmail_url
// and calendar_url, with the access token exchanged for the instance's
// refresh token, Google's errors made canonical by the core's mapping.
func TestGmailAndCalendarThroughTheConnector(t *testing.T) {
	s := newStandin(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /gmail/v1/users/me/labels", s.wrap("labels", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"labels":[{"id":"INBOX","name":"INBOX","type":"system"},{"id":"Label_7","name":"Receipts","type":"user"}]}`))
	}))
	mux.HandleFunc("GET /calendar/v3/users/me/calendarList", s.wrap("calendars", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"kind":"calendar#calendarList","items":[{"id":"ana@example.com","summary":"Ana","timeZone":"Europe/Paris","accessRole":"owner","primary":true}]}`))
	}))
	mux.HandleFunc("GET /calendar/v3/calendars/{id}/events", s.wrap("events", func(w http.ResponseWriter, r *http.Request) {
		gerror(w, 404, "Not Found", "notFound", "NOT_FOUND")
	}))
	api := httptest.NewServer(mux)
	t.Cleanup(api.Close)
	in := build(t, s, "google", fmt.Sprintf("toolsets: [gmail, calendar]\ngmail_url: %s/\ncalendar_url: %s/\n", api.URL, api.URL))

	for tool, want := range map[string]string{"gmail_list_labels": "Receipts", "calendar_list_calendars": "Europe/Paris"} {
		res, err := in.call(t, "t1", tool, `{}`, "")
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		b, _ := json.Marshal(res.Structured)
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: %s lacks %q", tool, b, want)
		}
	}
	_, err := in.call(t, "t1", "calendar_list_events", `{"calendar_id":"gone@example.com"}`, "")
	if legate.CodeOf(err) != legate.CodeNotFound {
		t.Errorf("a calendar Google does not know: %v, want NOT_FOUND", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls["token"] == 0 {
		t.Error("no access token was exchanged for the refresh token")
	}
}
