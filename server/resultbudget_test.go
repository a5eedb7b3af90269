package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/provenance"
	"github.com/legate-mcp/legate/resultcut"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// bigText is n numbered lines, some in paragraphs.
func bigText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of the dump, with a few words of content\n", i)
		if i%7 == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// budgetGateway serves a gateway with a native echo tool and an
// upstream's echo, a profile with a budget of 600 tokens, and tokens of
// alice (acme, that profile), bob (acme, the same profile), carol
// (globex, the same profile), and dave (acme, a profile without budget).
// (The store's suite checks that the same principal name in another
// tenant reads nothing either: a token's name is unique.)
// (extra is more of the config.)
func budgetGateway(t *testing.T, extra ...string) (g *servertest.Gateway, tokens map[string]string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "dump", Version: "1"}, nil)
	upstreamtest.AddEcho(s, "echo")
	up := upstreamtest.NewHTTPServer(t, s)
	t.Setenv("LEGATE_TEST_KEY", "s3cret")
	g = servertest.Start(t, testConfig+`
auth: {tokens: true}
upstreams:
  - id: up
    url: `+up.URL()+`
profiles:
  - name: small
    result_budget_tokens: 600
  - name: roomy
`+strings.Join(extra, ""))
	waitCatalog(t, g.GW, "mcp.up.echo")
	tokens = map[string]string{
		"alice":        g.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser, Tenant: "acme", Profile: "small"}),
		"bob":          g.Token(t, auth.Principal{Name: "bob", Role: auth.RoleUser, Tenant: "acme", Profile: "small"}),
		"carol-globex": g.Token(t, auth.Principal{Name: "carol", Role: auth.RoleUser, Tenant: "globex", Profile: "small"}),
		"dave":         g.Token(t, auth.Principal{Name: "dave", Role: auth.RoleUser, Tenant: "acme", Profile: "roomy"}),
	}
	return g, tokens
}

// connectAs opens a go-sdk client at version ("2025-11-25": a session;
// "2026-07-28": stateless) with bearer token tok.
func connectAs(t *testing.T, url, version, tok string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "budget-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token: tok, base: http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// cutRef is the reference and page count a cut result's _meta gives.
func cutRef(t *testing.T, res *mcp.CallToolResult) (string, int) {
	t.Helper()
	cut, _ := res.Meta[resultcut.CutMetaKey].(map[string]any)
	ref, _ := cut["ref"].(string)
	pages, _ := cut["pages"].(float64)
	if ref == "" || pages < 2 {
		b, _ := json.Marshal(res)
		t.Fatalf("not cut, or no reference: %.600s", b)
	}
	return ref, int(pages)
}

// readPages reads every page of ref with legate.result_read, each within
// budget and marked with the result's provenance, and returns the
// document they make (each page unwrapped when spotlit).
func readPages(t *testing.T, cs *mcp.ClientSession, ref string, pages, budget int) string {
	t.Helper()
	var doc strings.Builder
	for p := 1; p <= pages; p++ {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wire(resultcut.ReadTool), Arguments: map[string]any{"ref": ref, "page": p}})
		if err != nil || res.IsError {
			t.Fatalf("page %d: %v %+v", p, err, res)
		}
		if n := resultcut.ResultTokens(res); n > budget {
			t.Fatalf("page %d is %d tokens, over %d", p, n, budget)
		}
		if res.Meta[resultcut.CutMetaKey] != nil {
			t.Fatalf("page %d was cut again", p)
		}
		if m, ok := provenance.Of(res); !ok || m.Trust != provenance.Untrusted || m.FetchedAt == "" {
			t.Fatalf("page %d lost the result's provenance: %v", p, res.Meta)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		heading, body, ok := strings.Cut(text, "]\n")
		if !ok || !strings.Contains(heading, fmt.Sprintf("page %d of %d", p, pages)) {
			t.Fatalf("page %d heading: %q", p, heading)
		}
		doc.WriteString(unwrapped(body))
	}
	return doc.String()
}

// spotlitLine matches the first two lines of a text spotlit by
// provenance.Wrap; the last is its closing marker.
var spotlitLine = regexp.MustCompile(`^\[Untrusted data from [^\n]*<<data ([0-9a-f]{12})>>[^\n]*\]\n<<data ([0-9a-f]{12})>>\n`)

// unwrapped is text unwrapped when provenance.Wrap wrapped it.
func unwrapped(text string) string {
	m := spotlitLine.FindStringSubmatch(text)
	if m == nil || m[1] != m[2] || !strings.HasSuffix(text, "\n<<end "+m[1]+">>") {
		return text
	}
	return strings.TrimSuffix(text[len(m[0]):], "\n<<end "+m[1]+">>")
}

// notFound reports whether legate.result_read and the resource both
// answer not found for ref to cs.
func notFound(t *testing.T, cs *mcp.ClientSession, ref string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wire(resultcut.ReadTool), Arguments: map[string]any{"ref": ref}})
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "NOT_FOUND") {
		t.Errorf("legate.result_read of another's result: %v %+v", err, res)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: resultcut.ResourcePrefix + ref}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("the resource of another's result: %v", err)
	}
}

// A result over its profile's budget arrives cut with its notice, within
// the budget, for a native and an upstream tool, on a session and
// stateless; legate.result_read gives back the whole, page by page, and
// the resource the whole at once; to anyone else, of the tenant or not,
// it does not exist.
func TestResultBudgetCutsAndKeeps(t *testing.T) {
	g, tok := budgetGateway(t)
	url := g.URL + "/mcp"
	text := bigText(3000)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			alice := connectAs(t, url, version, tok["alice"])
			ctx := context.Background()

			// An upstream's tool: text, cut by lines.
			res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.echo"), Arguments: map[string]any{"text": text}})
			if err != nil || res.IsError {
				t.Fatalf("upstream call: %v %+v", err, res)
			}
			if n := resultcut.ResultTokens(res); n > 600 {
				t.Fatalf("upstream result of %d tokens, over 600", n)
			}
			got := res.Content[0].(*mcp.TextContent).Text
			if !strings.HasPrefix(got, "line 1 of the dump") || !strings.HasSuffix(got, "line 3000 of the dump, with a few words of content\n") ||
				!strings.Contains(got, "lines are cut") || !strings.Contains(got, wire(resultcut.ReadTool)) {
				t.Fatalf("upstream result:\n%s", got)
			}
			ref, pages := cutRef(t, res)
			if doc := readPages(t, alice, ref, pages, 600); doc != text {
				t.Fatalf("the pages make %d bytes, not the %d of the result", len(doc), len(text))
			}
			rr, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: resultcut.ResourcePrefix + ref})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != text || rr.Meta[provenance.MetaKey] == nil {
				t.Fatalf("the resource: %v %v", err, rr.Meta)
			}

			// A native tool with an output schema: its JSON trimmed, valid.
			res, err = alice.CallTool(ctx, &mcp.CallToolParams{Name: "e.echo", Arguments: map[string]any{"text": text}})
			if err != nil || res.IsError {
				t.Fatalf("native call: %v %+v", err, res)
			}
			if n := resultcut.ResultTokens(res); n > 600 {
				t.Fatalf("native result of %d tokens, over 600", n)
			}
			var out struct {
				Text      string `json:"text"`
				Principal string `json:"principal"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil || out.Principal != "alice" || !strings.Contains(out.Text, "bytes cut]") {
				t.Fatalf("native structured content: %s", b)
			}
			if last := res.Content[len(res.Content)-1].(*mcp.TextContent).Text; !strings.Contains(last, "strings shortened") {
				t.Fatalf("native notice: %s", last)
			}
			ref2, pages2 := cutRef(t, res)
			if err := json.Unmarshal([]byte(readPages(t, alice, ref2, pages2, 600)), &out); err != nil || out.Text != text {
				t.Fatalf("the native result's pages: %v", err)
			}

			// Another principal of the tenant, one of another tenant:
			// neither reads it.
			for _, who := range []string{"bob", "carol-globex"} {
				other := connectAs(t, url, version, tok[who])
				notFound(t, other, ref)
				notFound(t, other, ref2)
			}
		})
	}
}

// With results.spotlight, a result cut to its budget stays marked on every
// page read back: each page carries the result's provenance and is wrapped
// as the result was, within the budget still, so that an instruction
// planted past the cut reaches the model as data, not as the gateway's
// own text.
func TestResultBudgetPagesStayMarked(t *testing.T) {
	g, tok := budgetGateway(t, "results: {spotlight: true}\n")
	lines := strings.SplitAfter(bigText(3000), "\n")
	lines[1500] = planted + "\n"
	text := strings.Join(lines, "")
	alice := connectAs(t, g.URL+"/mcp", "2025-11-25", tok["alice"])
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: wire("mcp.up.echo"), Arguments: map[string]any{"text": text}})
	if err != nil || res.IsError {
		t.Fatalf("upstream call: %v %+v", err, res)
	}
	ref, pages := cutRef(t, res)
	// The kept whole is the result as the model saw it: spotlit once.
	if doc := unwrapped(readPages(t, alice, ref, pages, 600)); doc != text {
		t.Fatalf("the pages make %d bytes, not the %d of the result", len(doc), len(text))
	}
	for p := 1; p <= pages; p++ {
		rr, err := alice.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: fmt.Sprintf("%s%s?page=%d", resultcut.ResourcePrefix, ref, p)})
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(rr.Contents[0].Text, "]\n")
		if unwrapped(body) == body || rr.Meta[provenance.MetaKey] == nil {
			t.Fatalf("page %d of the resource is not marked:\n%.300s", p, rr.Contents[0].Text)
		}
	}
}

// A profile without a budget gets results whole, on the fast path, unless
// the call asks for a budget in its _meta; a call's budget only lowers
// its profile's.
func TestResultBudgetPerCall(t *testing.T) {
	g, tok := budgetGateway(t)
	url := g.URL + "/mcp"
	text := bigText(3000)
	ctx := context.Background()
	dave := connectAs(t, url, "2025-11-25", tok["dave"])
	g.WaitSession(t, dave.ID())
	admin := g.Token(t, auth.Principal{Name: "ops", Role: auth.RoleAdmin})
	fastCalls := func() float64 {
		req, _ := http.NewRequest("GET", g.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, `legate_fast_path_requests_total{method="tools/call"} `); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		return 0
	}

	before := fastCalls()
	res, err := dave.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.echo"), Arguments: map[string]any{"text": text}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != text || res.Meta[resultcut.CutMetaKey] != nil {
		t.Fatalf("no budget: the result was changed (%v)", err)
	}
	if fastCalls() != before+1 {
		t.Fatalf("no budget: the call did not take the fast path")
	}

	before = fastCalls()
	res, err = dave.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.echo"), Arguments: map[string]any{"text": text},
		Meta: mcp.Meta{resultcut.MetaKey: 400}})
	if err != nil || resultcut.ResultTokens(res) > 400 {
		t.Fatalf("a call's budget of 400: %v, %d tokens", err, resultcut.ResultTokens(res))
	}
	ref, pages := cutRef(t, res)
	if fastCalls() != before {
		t.Fatal("a call with a budget took the fast path")
	}
	if doc := readPages(t, dave, ref, pages, 400); doc != text {
		t.Fatal("the pages do not make the result")
	}

	// alice's profile says 600: a call may lower it, not raise it.
	alice := connectAs(t, url, "2026-07-28", tok["alice"])
	for ask, want := range map[int]int{300: 300, 5000: 600} {
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.echo"), Arguments: map[string]any{"text": text}, Meta: mcp.Meta{resultcut.MetaKey: ask}})
		cut, _ := res.Meta[resultcut.CutMetaKey].(map[string]any)
		if err != nil || cut["budget_tokens"] != float64(want) || resultcut.ResultTokens(res) > want {
			t.Errorf("asking %d: %v, cut %v, %d tokens; want a budget of %d", ask, err, cut, resultcut.ResultTokens(res), want)
		}
	}
}

// On stdio, the budget of the top-level profile applies to the local
// principal: the fast path hands the call to the SDK's path, which cuts
// it, and legate.result_read reads the rest.
func TestResultBudgetOnStdio(t *testing.T) {
	gw := newGateway(t, testConfig+`
profile: small
profiles:
  - name: small
    result_budget_tokens: 500
`)
	lines := openLines(t, gw, true)
	text := bigText(2000)
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": map[string]any{"name": "e.echo", "arguments": map[string]any{"text": text}}})
	got := lines.exchange(string(call))
	var answer struct {
		Result *mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(got[len(got)-1]), &answer); err != nil || answer.Result == nil {
		t.Fatalf("answer %.300s: %v", got[len(got)-1], err)
	}
	if n := resultcut.ResultTokens(answer.Result); n > 500 {
		t.Fatalf("%d tokens, over 500", n)
	}
	ref, pages := cutRef(t, answer.Result)
	var doc strings.Builder
	for p := 1; p <= pages; p++ {
		read, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 100 + p, "method": "tools/call",
			"params": map[string]any{"name": resultcut.ReadTool, "arguments": map[string]any{"ref": ref, "page": p}}})
		got := lines.exchange(string(read))
		if err := json.Unmarshal([]byte(got[len(got)-1]), &answer); err != nil || answer.Result == nil || answer.Result.IsError {
			t.Fatalf("page %d: %.300s", p, got[len(got)-1])
		}
		_, body, _ := strings.Cut(answer.Result.Content[0].(*mcp.TextContent).Text, "]\n")
		doc.WriteString(body)
	}
	var out struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(doc.String()), &out); err != nil || out.Text != text {
		t.Fatalf("the pages do not make the result: %v", err)
	}
	// The resource, though no upstream offers resources.
	read, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": map[string]any{"uri": resultcut.ResourcePrefix + ref + "?page=2"}})
	got = lines.exchange(string(read))
	var rr struct {
		Result *mcp.ReadResourceResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(got[len(got)-1]), &rr); err != nil || rr.Result == nil || !strings.Contains(rr.Result.Contents[0].Text, "page 2 of") {
		t.Fatalf("resources/read: %.300s", got[len(got)-1])
	}
}
