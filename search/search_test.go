package search

import (
	"fmt"
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"listPullRequests":          {"list", "pull", "request", "listpullrequest"},
		"github.create_issue":       {"github", "creat", "issu"},
		"API-post-search":           {"api", "post", "search"},
		"HTTPServer repositories":   {"http", "server", "httpserver", "repositori"},
		"GitHub":                    {"git", "hub", "github"},
		"the issues of a repo":      {"issu", "repositori"},
		"searching the directories": {"search", "directori"},
		"s3 bucket v2":              {"3", "bucket", "v", "2"},
		"Addresses and statuses":    {"address", "status"},
		"open PRs, the DB":          {"open", "pull", "request", "databas"},
		"a to-do, to_do or To-Do":   {"todo", "todo", "todo"},
		"e-mail, mail or emails":    {"email", "email", "email"},
	} {
		if got := terms(in); !slices.Equal(got, want) {
			t.Errorf("terms(%q) = %q, want %q", in, got, want)
		}
	}
}

func testIndex() *Index {
	return New([]Doc{
		{Name: "github.create_issue", Description: "Open an issue in a repository", Source: "github"},
		{Name: "slack.post_message", Description: "Post a message to a channel", Source: "slack"},
		{Name: "files.delete_file", Description: "Delete a file", Source: "files",
			Params: []Param{{Name: "path", Description: "where the file is"}}},
		{Name: "mcp.docs.read", Description: "Read a document", Source: "docs", Aliases: []string{"mcp__docs__read"}},
	})
}

func TestSearch(t *testing.T) {
	ix := testIndex()
	for q, want := range map[string]int{
		"new ticket about the login bug":   0, // synonyms: ticket, bug → issue
		"send a chat to the team":          1,
		"remove the document at this path": 2,
		"mcp__docs__read":                  3, // an exact wire name
		"GitHub":                           0, // the source counts
	} {
		hits := ix.Search(q, Options{Limit: 2})
		if len(hits) == 0 || hits[0].Doc != want {
			t.Errorf("Search(%q) = %v, want doc %d first", q, hits, want)
		}
	}
	if hits := ix.Search("zebra", Options{}); len(hits) != 0 {
		t.Errorf("a query matching nothing found %v", hits)
	}
}

func TestSearchKeepAndLimit(t *testing.T) {
	ix := testIndex()
	hits := ix.Search("delete file document issue message", Options{Limit: 2, Keep: func(d int) bool { return d != 2 }})
	if len(hits) != 2 {
		t.Fatalf("got %d hits, want the limit of 2", len(hits))
	}
	for i, h := range hits {
		if h.Doc == 2 {
			t.Errorf("Keep dropped doc 2, yet it was found")
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hits not best first: %v", hits)
		}
	}
}

// Searches share the index's pooled scratch memory: concurrent ones must
// rank as a lone one does.
func TestConcurrentSearches(t *testing.T) {
	ix := testIndex()
	queries := []string{"new ticket", "send a chat", "remove the document", "read", "GitHub issue", "zebra"}
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		want[i] = ix.Search(q, Options{})
	}
	done := make(chan string)
	for w := range 8 {
		go func() {
			for i := range 200 {
				q := (w + i) % len(queries)
				if got := ix.Search(queries[q], Options{}); !slices.Equal(got, want[q]) {
					done <- fmt.Sprintf("%q: %v, alone %v", queries[q], got, want[q])
					return
				}
			}
			done <- ""
		}()
	}
	for range 8 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}

// Documents of equal score come in their order, whatever the limit: the
// first hits of a small limit are the first hits of a larger one.
func TestTiesKeepOrder(t *testing.T) {
	docs := make([]Doc, 8)
	for i := range docs {
		docs[i] = Doc{Name: fmt.Sprintf("svc%d.create_issue", i), Description: "Create an issue"}
	}
	ix := New(docs)
	all := ix.Search("create issue", Options{Limit: len(docs)})
	for i, h := range all {
		if h.Doc != i {
			t.Fatalf("ties out of order: %v", all)
		}
	}
	for l := 1; l < len(docs); l++ {
		if got := ix.Search("create issue", Options{Limit: l}); !slices.Equal(got, all[:l]) {
			t.Errorf("limit %d: %v, want %v", l, got, all[:l])
		}
	}
}

func TestQueryWords(t *testing.T) {
	for in, want := range map[string][]string{
		"Set up a repo, then look up the docs":  {"setup", "a", "repo", "and", "then", "lookup", "the", "docs"},
		"get rid of the temp file":              {"delete", "the", "temp", "file"},
		"reset upload asset update":             {"reset", "upload", "asset", "update"},
		"open https://example.com/a?b=c now":    {"open", "url", "now"},
		"mail bob@example.com the notes.txt":    {"mail", "email", "the", "text", "file", "send"},
		"the mail from bob":                     {"the", "mail", "from", "bob"},
		"what is at 48.8584, 2.2945?":           {"what", "is", "at", "coordinates"},
		"how far is it, at 40.7 N, 74.0 W":      {"distance", "is", "it", "and", "at", "coordinates"},
		"give back the charge":                  {"refund", "the", "charge"},
		"add a to-do to the bottom of it":       {"add", "a", "todo", "append", "of", "it"},
		"post in #general to @alice":            {"post", "in", "channel", "to", "user"},
		"let everyone in #ops know":             {"notify", "everyone", "in", "channel", "let"},
		"watch acme.com/terms for changes":      {"watch", "website", "url", "for", "changes"},
		"comment on #212":                       {"comment", "on", "issue", "or", "pull", "request"},
		"put a :tada: on it":                    {"put", "a", "emoji", "on", "it"},
		"meet at 10:30:45":                      {"meet", "at", "10", "30", "45"},
		"where's the roadmap?":                  {"where", "s", "the", "roadmap", "find"},
		"keep an eye on the open source site":   {"monitor", "on", "the", "repository", "site"},
		"pull A1:F20 from the Sales tab":        {"pull", "cell", "range", "from", "the", "sales", "tab"},
		"list ~/code/api and src/hooks/api/":    {"list", "path", "api", "and", "path"},
		"open /data/exports/customers.csv":      {"open", "path", "spreadsheet", "file"},
		"acme/web and v1/2":                     {"acme", "web", "and", "v", "1", "2"},
		"hit GET /orders/12 for me":             {"hit", "get", "path", "12", "for", "me", "http", "request"},
		"quick one: 48213 + 9987?":              {"quick", "one", "48213", "9987", "sum", "calculate"},
		"post in #ops at 9am tomorrow":          {"post", "in", "channel", "at", "9", "am", "tomorrow", "schedule"},
		"how big is it? hold on":                {"size", "is", "it", "wait"},
		"Add 48213 and 9987":                    {"add", "48213", "and", "9987", "sum", "calculate"},
		"bump sub_1MabcDEF to 8 seats":          {"bump", "subscription", "to", "8", "seats"},
		"sort sub_categories and cus_12":        {"sort", "sub", "categories", "and", "cus", "12"},
		"add a lead to the Leads sheet":         {"add", "a", "lead", "to", "the", "leads", "sheet", "append", "row"},
		"bike from Utrecht to Zuid":             {"bike", "from", "utrecht", "to", "zuid", "directions"},
		"copy it from a to b":                   {"copy", "it", "from", "a", "to", "b"},
		"give sam edit access":                  {"give", "sam", "share"},
		"write a .env.example and .gitignore":   {"write", "a", "file", "and", "file"},
		"cat .github/workflows/ci.yml":          {"cat", "file"},
		"pull down go.tar.gz":                   {"download", "archive", "file"},
		"flag it so I don't forget":             {"flag", "it", "so", "i", "remind"},
		"slap a ✅ on it":                        {"slap", "a", "emoji", "on", "it"},
		"make the window 375x812":               {"make", "the", "window", "width", "height", "size"},
		"a plan at $29/month":                   {"a", "plan", "at", "amount", "price"},
		"does it say 'sold out' anywhere?":      {"does", "it", "say", "sold", "out", "anywhere", "find", "text"},
		"in nginx/site.conf change it":          {"in", "file", "change", "it"},
		"read me acme/api#915":                  {"read", "me", "issue", "or", "pull", "request"},
		"list the open PRs, then open a ticket": {"list", "the", "state", "prs", "and", "then", "open", "a", "ticket"},
		"which PRs are still open?":             {"which", "prs", "are", "still", "state"},
		"lat/long of the Louvre":                {"coordinates", "of", "the", "louvre"},
		"is job 7f3c2a9e-1b4d-4e8a done":        {"is", "job", "id", "done"},
		"order 12345678 not deadbeef":           {"order", "12345678", "not", "deadbeef"},
		"every URL on acme.io: just the links":  {"every", "url", "on", "website", "url", "just", "the", "links", "enumerate"},
		"commits on release/2.4 of acme/api":    {"commits", "on", "branch", "of", "acme", "api"},
		"what do you know from before?":         {"what", "do", "you", "know", "remember", "memory"},
		"a POST to orders on our API":           {"a", "post", "to", "orders", "on", "our", "api", "http", "request"},
		"get the README of acme/api":            {"get", "the", "readme", "of", "acme", "api", "file"},
		"set DATABASE_URL, not sub_total":       {"set", "variable", "and", "not", "sub", "total"},
		"it got fixed, close it":                {"it", "got", "fixed", "and", "close", "it"},
		"cat .github/ci.yml, then stop":         {"cat", "file", "and", "then", "stop"},
		"read a.go, b.go and c.go":              {"read", "file", "and", "file", "and", "file", "multiple"},
		"point the browser at https://a.io/x":   {"point", "the", "browser", "at", "url", "navigate"},
		"note for later: Dan likes tea":         {"note", "remember", "dan", "likes", "tea", "memory"},
		"who calls legacyAuth.verifyToken?":     {"who", "calls", "legacyauth", "verifytoken", "code"},
	} {
		if got := queryWords(in); !slices.Equal(got, want) {
			t.Errorf("queryWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// A request's term counts once per tool, by its best match: a tool that
// says many synonyms of it is no better a match than one that says one.
func TestSynonymsCountOnce(t *testing.T) {
	ix := New([]Doc{
		{Name: "alpha.widget", Description: "create or add a widget"},
		{Name: "beta.widget", Description: "create a widget"},
		{Name: "gamma.gadget", Description: "add a gadget"},
	})
	if hits := ix.Search("make a widget", Options{}); len(hits) != 3 || hits[0].Doc != 1 {
		t.Errorf("hits %v, want the tool saying one synonym once (doc 1) first", hits)
	}
}

// A question without a verb asks to read: a tool whose name lists,
// gets or searches ranks above one that acts, all else equal.
// A request that opens with the file it is about ("in config.go change
// …") has its verb after the file's name.
func TestVerbAfterTheFile(t *testing.T) {
	if qa, want := queryActions(queryWords("in app/config.go change the port")), actionClasses()[stem("change")]; qa != want {
		t.Errorf("queryActions = %b, want %b (update)", qa, want)
	}
	if qa := queryActions(queryWords("the file change log")); qa != 0 {
		t.Errorf("queryActions = %b for a request that does not open with a file; want none", qa)
	}
}

func TestQuestionPrefersReads(t *testing.T) {
	ix := New([]Doc{
		{Name: "svc.archive_widgets", Description: "Widgets of the account"},
		{Name: "svc.list_widgets", Description: "Widgets of the account"},
	})
	if hits := ix.Search("which widgets are there", Options{}); len(hits) != 2 || hits[0].Doc != 1 {
		t.Errorf("hits %v, want the list tool (doc 1) first", hits)
	}
	if hits := ix.Search("archive the widgets", Options{}); len(hits) != 2 || hits[0].Doc != 0 {
		t.Errorf("hits %v, want the archive tool (doc 0) first", hits)
	}
}

// Adjacent request terms found adjacent in a tool count beyond their two
// terms: "pull request" ranks the tool that says it above one that says
// "pull" and "request" apart.
func TestPairsCount(t *testing.T) {
	ix := New([]Doc{
		{Name: "alpha.fetch", Description: "pull the latest request log"},
		{Name: "beta.fetch", Description: "pull request details in full"},
	})
	if hits := ix.Search("pull request", Options{}); len(hits) != 2 || hits[0].Doc != 1 {
		t.Errorf("hits %v, want the tool saying the pair (doc 1) first", hits)
	}
}

// A verb's word counts as the request's action only in a verb's place:
// "show me the open widgets" asks to read, "please open a widget" and
// "I want to open a widget" to create.
func TestVerbInAVerbsPlace(t *testing.T) {
	create := actionClasses()[stem("create")]
	for q, wantCreate := range map[string]bool{
		"show me the open widgets": false,
		"list the open widgets":    false,
		"please open a widget":     true,
		"I want to open a widget":  true,
		"open a widget":            true,
	} {
		if got := queryActions(queryWords(q))&create != 0; got != wantCreate {
			t.Errorf("%q asks to create: %v, want %v", q, got, wantCreate)
		}
	}
}

// A request that names a tool's source wants that source's tools.
func TestSourceCounts(t *testing.T) {
	ix := New([]Doc{
		{Name: "search", Description: "Search the messages", Source: "chat"},
		{Name: "search", Description: "Search the messages", Source: "google mail"},
	})
	for q, want := range map[string]int{"search the messages": 0, "search the google mail messages": 1, "search messages in chat": 0} {
		hits := ix.Search(q, Options{})
		if len(hits) != 2 || hits[0].Doc != want {
			t.Errorf("%q: hits %v, want doc %d first", q, hits, want)
		}
	}
}

// A description's first sentence says what the tool does; a term there
// counts more than the same term among the details that follow.
func TestLeadSentenceCounts(t *testing.T) {
	ix := New([]Doc{
		{Name: "a.run", Description: "Run the job. Output in markdown."},
		{Name: "b.run", Description: "Convert the page to markdown. The job runs at once."},
	})
	if hits := ix.Search("markdown", Options{}); len(hits) != 2 || hits[0].Doc != 1 {
		t.Errorf("hits %v, want the tool whose first sentence says it (doc 1) first", hits)
	}
	for in, want := range map[string]string{
		"One. Two.":          "One",
		"v1.2 is out. Then":  "v1.2 is out",
		"first line\nsecond": "first line",
		"no end":             "no end",
		"Ask? Yes.":          "Ask",
	} {
		if got := lead(in); got != want {
			t.Errorf("lead(%q) = %q, want %q", in, got, want)
		}
	}
}
