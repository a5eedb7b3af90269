package calendar_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	cal "google.golang.org/api/calendar/v3"
)

// kinds are the calendar/v3 types the stand-in's answers decode into.
var kinds = map[string]func() any{
	"CalendarList":     func() any { return new(cal.CalendarList) },
	"Events":           func() any { return new(cal.Events) },
	"Event":            func() any { return new(cal.Event) },
	"FreeBusyResponse": func() any { return new(cal.FreeBusyResponse) },
}

// Every answer the stand-in gives while the tools' cases run decodes into
// the type google.golang.org/api generates from Calendar's discovery
// document, refusing unknown fields: the stand-in answers only what
// Calendar declares, with its types.
func TestStandinAnswersDecodeStrictly(t *testing.T) {
	seen := map[string]bool{}
	for name, run := range toolCases {
		s := newStandin(t)
		run(t, s, newEnv(t, s, 3))
		s.mu.Lock()
		answers := s.answers
		s.mu.Unlock()
		for _, a := range answers {
			mk := kinds[a.kind]
			if mk == nil {
				t.Fatalf("%s: the stand-in answered a %s, which the test does not know", name, a.kind)
			}
			dec := json.NewDecoder(bytes.NewReader(a.body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(mk()); err != nil {
				t.Errorf("%s: a %s: %v\n%s", name, a.kind, err, a.body)
			}
			seen[a.kind] = true
		}
	}
	for kind := range kinds {
		if !seen[kind] {
			t.Errorf("no case made the stand-in answer a %s", kind)
		}
	}
}

// The kinds are schemas of the discovery document the module ships.
func TestKindsAreInTheDiscoveryDocument(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "google.golang.org/api").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "calendar/v3/calendar-api.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Schemas map[string]any }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for kind := range kinds {
		if d.Schemas[kind] == nil {
			t.Errorf("%s is not a schema of Calendar's discovery document", kind)
		}
	}
}
