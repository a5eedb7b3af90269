package slack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

// walk calls a list tool page after page, by cursor, and returns the
// pages and the items.
func (f *fixture) walk(t *testing.T, tool, args string, user bool) (pages, items int) {
	t.Helper()
	creds := connectortest.Creds{"bot_token": botToken}
	if user {
		creds["user_token"] = userToken
	}
	cursor := ""
	for {
		a := strings.TrimSuffix(args, "}")
		if cursor != "" {
			a += fmt.Sprintf(`,"cursor":%q`, cursor)
		}
		res, err := f.in.callWith(t, creds, tool, a+"}", "")
		if err != nil {
			t.Fatalf("%s page %d: %v", tool, pages+1, err)
		}
		var l struct {
			Items      []json.RawMessage `json:"items"`
			NextCursor string            `json:"next_cursor"`
		}
		b, _ := json.Marshal(res.Structured)
		json.Unmarshal(b, &l)
		pages++
		items += len(l.Items)
		if l.NextCursor == "" || pages > 50 {
			return pages, items
		}
		cursor = l.NextCursor
	}
}

// Every list tool walks three pages or more by cursor.
func TestNewListsWalkPages(t *testing.T) {
	f := newFixture(t, 7, "")
	for _, tc := range []struct {
		tool, args   string
		user         bool
		pages, items int
	}{
		{"list_users", `{"limit":3}`, false, 3, 8},
		{"list_unreads", `{"limit":1}`, false, 3, 1}, // C000 has no read marker, C002 nothing after it
		{"list_scheduled", `{"channel":"#chan-0","limit":3}`, false, 3, 7},
		{"search_messages", `{"query":"message","limit":3}`, true, 4, 12},
		{"read_thread", fmt.Sprintf(`{"thread":%q,"limit":1}`, permalinkOf("C000", f.ts[0])), false, 3, 3},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			pages, items := f.walk(t, tc.tool, tc.args, tc.user)
			if pages != tc.pages || items != tc.items {
				t.Fatalf("%d pages, %d items; want %d, %d", pages, items, tc.pages, tc.items)
			}
		})
	}
}

// Each tool's Slack method answering 429 with Retry-After, then 500, is
// retried, and the call succeeds on the third attempt; a write writes once.
func TestRateLimitsAndServerErrorsAreRetried(t *testing.T) {
	for tool, method := range map[string]string{
		"list_users": "users.list", "find_user": "users.lookupByEmail", "open_dm": "conversations.open", "list_unreads": "users.conversations",
		"search_messages": "search.messages", "list_scheduled": "chat.scheduledMessages.list", "read_file": "files.info",
		"read_thread": "conversations.replies", "read_history": "conversations.history", "post_message": "chat.postMessage",
		"add_reaction": "reactions.add", "set_topic": "conversations.setTopic", "schedule_message": "chat.scheduleMessage",
	} {
		t.Run(tool, func(t *testing.T) {
			f := newFixture(t, 3, "")
			f.s.fault = func(m string, n int, w http.ResponseWriter, r *http.Request) bool {
				switch {
				case m != method || n > 2:
					return false
				case n == 1:
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(http.StatusTooManyRequests)
				default:
					http.Error(w, "upstream trouble", http.StatusBadGateway)
				}
				return true
			}
			res, err := f.run(t, f.in, tool, 1, "op-retry")
			if err != nil {
				t.Fatal(err)
			}
			f.cases[tool].check(t, 1, res)
			if n := f.s.count(method); n != 3 {
				t.Errorf("%d requests to %s; want 3", n, method)
			}
			if w := f.cases[tool].method; w != "" && f.s.writeCount(w) != 1 {
				t.Errorf("%d writes; want 1", f.s.writeCount(w))
			}
		})
	}
}
