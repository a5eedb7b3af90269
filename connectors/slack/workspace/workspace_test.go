package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/slack/workspace"
)

// server answers users.info for any U… id, users.list with two pages of
// users, and auth.test, counting the requests.
func server(t *testing.T) (*slack.Client, map[string]*atomic.Int32) {
	t.Helper()
	counts := map[string]*atomic.Int32{"users.info": {}, "users.list": {}, "auth.test": {}}
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/users.info", func(w http.ResponseWriter, r *http.Request) {
		counts["users.info"].Add(1)
		u := slack.User{ID: r.FormValue("user"), Name: "n" + r.FormValue("user")}
		answer(w, map[string]any{"ok": true, "user": u})
	})
	mux.HandleFunc("/users.list", func(w http.ResponseWriter, r *http.Request) {
		counts["users.list"].Add(1)
		a, b := slack.User{ID: "U1", Name: "ada", RealName: "Ada Lovelace"}, slack.User{ID: "U2", Name: "adam", RealName: "Adam Smith"}
		if r.FormValue("cursor") == "" {
			answer(w, map[string]any{"ok": true, "members": []slack.User{a}, "response_metadata": map[string]string{"next_cursor": "2"}})
			return
		}
		answer(w, map[string]any{"ok": true, "members": []slack.User{b}})
	})
	mux.HandleFunc("/auth.test", func(w http.ResponseWriter, r *http.Request) {
		counts["auth.test"].Add(1)
		answer(w, map[string]any{"ok": true, "user_id": "U9", "bot_id": "B9"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return slack.New("xoxb-test", slack.OptionAPIURL(srv.URL+"/")), counts
}

// Names fetches an unknown user once, at most MaxNamed per call, and
// leaves out what is not a user id.
func TestNamesAreCachedAndBounded(t *testing.T) {
	api, counts := server(t)
	d := workspace.New()
	ctx := context.Background()
	var ids []string
	for i := range workspace.MaxNamed + 5 {
		ids = append(ids, fmt.Sprintf("U%03d", i))
	}
	got := d.Names(ctx, api, append(ids, "B1", ""))
	if len(got) != workspace.MaxNamed || counts["users.info"].Load() != int32(workspace.MaxNamed) {
		t.Fatalf("%d named with %d requests; want %d", len(got), counts["users.info"].Load(), workspace.MaxNamed)
	}
	got = d.Names(ctx, api, ids[:workspace.MaxNamed])
	if len(got) != workspace.MaxNamed || counts["users.info"].Load() != int32(workspace.MaxNamed) {
		t.Fatalf("cached names asked again: %d requests", counts["users.info"].Load())
	}
}

// Person finds by name across the directory's pages, read once; an
// ambiguous name asks for the id; WhoAmI asks auth.test once per token.
func TestPersonAndWhoAmI(t *testing.T) {
	api, counts := server(t)
	d := workspace.New()
	ctx := context.Background()
	u, err := d.Person(ctx, api, "@ada")
	if err != nil || u.ID != "U1" {
		t.Fatalf("@ada: %+v %v", u, err)
	}
	if u, err := d.Person(ctx, api, "smith"); err != nil || u.ID != "U2" {
		t.Fatalf("smith: %+v %v", u, err)
	}
	if _, err := d.Person(ctx, api, "a"); legate.CodeOf(err) != legate.CodeInvalidArgument {
		t.Fatalf("an ambiguous name: %v", err)
	}
	if _, err := d.Person(ctx, api, "zed"); legate.CodeOf(err) != legate.CodeNotFound {
		t.Fatalf("nobody: %v", err)
	}
	if n := counts["users.list"].Load(); n != 2 {
		t.Fatalf("users.list read %d times; want its two pages once", n)
	}
	for range 3 {
		if me, err := d.WhoAmI(ctx, api, "xoxb-test"); err != nil || me.User != "U9" || me.Bot != "B9" {
			t.Fatalf("whoami: %+v %v", me, err)
		}
	}
	if n := counts["auth.test"].Load(); n != 1 {
		t.Fatalf("auth.test asked %d times", n)
	}
}
