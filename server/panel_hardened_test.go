package server_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

// hardenedGateway is a gateway whose auth section is authYAML.
func hardenedGateway(t *testing.T, authYAML string) (*sqlite.Store, *server.Gateway) {
	t.Helper()
	st := memStore(t)
	cfg, err := config.Parse([]byte("auth: "+authYAML+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return st, gw
}

// panelAddUpstream logs in to the panel with tok, opens the upstreams
// page and submits its form for adding an upstream, as a browser would;
// it returns the page the browser lands on.
func panelAddUpstream(t *testing.T, gw *server.Gateway, tok, id string) string {
	t.Helper()
	c, base, _ := panelClient(t, gw, tok)
	resp, err := c.Get(base + "/upstreams")
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	form := regexp.MustCompile(`(?s)<form method="post" action="/upstreams" [^>]*>.*?name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || form == nil {
		t.Fatalf("the upstreams page has no form adding an upstream (%d):\n%s", resp.StatusCode, page)
	}
	resp, err = c.PostForm(base+"/upstreams", url.Values{"csrf": {form[1]}, "id": {id}, "url": {"http://127.0.0.1:1/mcp"}, "command": {""}, "tenant": {""}})
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, resp)
}

// On a hardened deployment the panel's form for adding an upstream works
// for a pinned admin only: an admin not pinned is refused, told who was
// refused and how to pin them, and nothing is stored.
func TestPanelHardenedAddUpstreamNeedsAPin(t *testing.T) {
	st, gw := hardenedGateway(t, "{tokens: true, hardened: true, pins: [root]}")
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	eve := token(t, st, auth.Principal{Name: "eve", Role: auth.RoleAdmin})

	page := panelAddUpstream(t, gw, eve, "far")
	if !strings.Contains(page, `class="error"`) || !strings.Contains(page, "&#34;eve&#34;") || !strings.Contains(page, "auth.pins") {
		t.Fatalf("eve adds an upstream through the panel; want an error naming eve and auth.pins:\n%s", page)
	}
	if stored(t, st, "far") {
		t.Fatal("eve's refused upstream was stored")
	}

	page = panelAddUpstream(t, gw, root, "far")
	if strings.Contains(page, `class="error"`) || !strings.Contains(page, "added upstream far") {
		t.Fatalf("root adds an upstream through the panel:\n%s", page)
	}
	if !stored(t, st, "far") {
		t.Fatal("root's upstream was not stored")
	}
}

// Hardened with no pin, nobody adds an upstream through the panel; not
// hardened, any admin does.
func TestPanelAddUpstreamWithoutPins(t *testing.T) {
	st, gw := hardenedGateway(t, "{tokens: true, hardened: true}")
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	if page := panelAddUpstream(t, gw, root, "far"); !strings.Contains(page, `class="error"`) || !strings.Contains(page, "&#34;root&#34;") {
		t.Fatalf("root adds an upstream with no pin; want an error naming root:\n%s", page)
	}
	if stored(t, st, "far") {
		t.Fatal("the refused upstream was stored")
	}

	st, gw = hardenedGateway(t, "{tokens: true}")
	root = token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	if page := panelAddUpstream(t, gw, root, "far"); !strings.Contains(page, "added upstream far") {
		t.Fatalf("an admin of a deployment not hardened adds an upstream:\n%s", page)
	}
	if !stored(t, st, "far") {
		t.Fatal("the upstream was not stored")
	}
}
