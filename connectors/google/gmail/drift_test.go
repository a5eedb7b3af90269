package gmail_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gm "google.golang.org/api/gmail/v1"
)

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// kinds are the gmail/v1 types the stand-in's answers decode into.
var kinds = map[string]func() any{
	"ListMessagesResponse": func() any { return new(gm.ListMessagesResponse) },
	"Message":              func() any { return new(gm.Message) },
	"MessagePartBody":      func() any { return new(gm.MessagePartBody) },
	"Thread":               func() any { return new(gm.Thread) },
	"ListLabelsResponse":   func() any { return new(gm.ListLabelsResponse) },
	"Profile":              func() any { return new(gm.Profile) },
	"Draft":                func() any { return new(gm.Draft) },
	"ListDraftsResponse":   func() any { return new(gm.ListDraftsResponse) },
}

// Every answer the stand-in gives while the tools' cases run decodes into
// the type google.golang.org/api generates from Gmail's discovery
// document, refusing unknown fields: the stand-in answers only what Gmail
// declares, with its types (an internalDate as a string, sizes as
// numbers).
func TestStandinAnswersDecodeStrictly(t *testing.T) {
	seen := map[string]bool{}
	runs := map[string]func(s *standin){}
	for name, run := range toolCases {
		runs[name] = func(s *standin) { run(t, s, newEnv(t, s, 3)) }
	}
	// The writes whose answer is lost, for the reads that look for them.
	for name, setup := range writeCases {
		runs["lost "+name] = func(s *standin) {
			args, op, _ := setup(s, 0)
			var l loseFirst
			l.arm()
			s.lose = func(got string) bool { return got == op && l.lose() }
			if _, err := newEnv(t, s, 3).call(t, name, args, "op-1"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, run := range runs {
		s := newStandin(t)
		run(s)
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

// The kinds are schemas of the discovery document the module ships, so
// that the table above names real Gmail types.
func TestKindsAreInTheDiscoveryDocument(t *testing.T) {
	doc := discovery(t, "gmail/v1/gmail-api.json")
	var d struct{ Schemas map[string]any }
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	for kind := range kinds {
		if d.Schemas[kind] == nil {
			t.Errorf("%s is not a schema of Gmail's discovery document", kind)
		}
	}
}

// discovery reads a discovery document of the google.golang.org/api
// module this package builds with.
func discovery(t *testing.T, path string) []byte {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "google.golang.org/api").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), path))
	if err != nil {
		t.Fatalf("the discovery document: %v", err)
	}
	return b
}
