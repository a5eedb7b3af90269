package search

import (
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// terms splits text into normalized terms: words split at anything not a
// letter or digit, at snake_case, camelCase and dots, lower-cased, stop
// words dropped, abbreviations spelled out, stemmed (Porter2).
func terms(text string) []string {
	return appendTerms(nil, text, nil)
}

// appendTerms appends the terms of text to out; cache, when not nil,
// keeps the stems already computed (the index's build stems each word
// of its vocabulary once).
func appendTerms(out []string, text string, cache map[string]string) []string {
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if stopWords[w] {
			continue
		}
		if long, ok := abbreviations[w]; ok {
			for _, l := range long {
				out = append(out, stemCached(l, cache))
			}
			continue
		}
		out = append(out, stemCached(w, cache))
	}
	return out
}

func stemCached(w string, cache map[string]string) string {
	if cache == nil {
		return stem(w)
	}
	s, ok := cache[w]
	if !ok {
		s = stem(w)
		cache[w] = s
	}
	return s
}

// words splits text at non-alphanumerics, between letters and digits
// ("v2", "s3") and at camelCase boundaries ("listPullRequests" → list,
// Pull, Requests; "HTTPServer" → HTTP, Server). A word split at its case
// comes whole too, after its parts, so that "GitHub" in a description
// meets "github" in a request (which is lower-cased before it is split).
func words(text string) []string {
	var out []string
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i]) && !unicode.IsDigit(rs[i]) {
			i++
			continue
		}
		// A segment: letters only, or digits only.
		j := i + 1
		for j < len(rs) && (unicode.IsLetter(rs[j]) && unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[j]) && unicode.IsDigit(rs[i])) {
			j++
		}
		out = appendCamel(out, rs[i:j])
		i = j
	}
	return out
}

// appendCamel appends the camelCase parts of seg, and seg whole if it has
// more than one.
func appendCamel(out []string, seg []rune) []string {
	start, parts := 0, 0
	for k := 1; k < len(seg); k++ {
		if unicode.IsUpper(seg[k]) && unicode.IsLower(seg[k-1]) || // fooBar
			unicode.IsUpper(seg[k-1]) && unicode.IsUpper(seg[k]) && k+1 < len(seg) && unicode.IsLower(seg[k+1]) &&
				string(seg[k+1:]) != "s" { // HTTPServer, not PRs
			out = append(out, string(seg[start:k]))
			start, parts = k, parts+1
		}
	}
	out = append(out, string(seg[start:]))
	if parts > 0 {
		out = append(out, string(seg))
	}
	return out
}

// stem reduces a lower-cased word to its Porter2 (Snowball English) stem,
// so that "issues", "issued" and "issue" meet, as do "deployment" and
// "deployed"; the words irregular lists keep the stem given there.
func stem(w string) string {
	if s, ok := irregular[w]; ok {
		return s
	}
	return english.Stem(w, true)
}

// irregular holds the forms the stemmer would leave apart or bring
// together wrongly.
var irregular = map[string]string{
	"children": "child", "people": "person", "indices": "index",
	"data": "data", "news": "news",
}

// abbreviations are short forms spelled out before stemming, in tools
// and requests alike, so that "repo" meets "repository" and "PR" "pull
// request" at full weight.
var abbreviations = map[string][]string{
	"pr": {"pull", "request"}, "prs": {"pull", "request"}, "mr": {"merge", "request"}, "mrs": {"merge", "request"},
	"repo": {"repository"}, "repos": {"repository"}, "db": {"database"}, "dbs": {"database"},
	"msg": {"message"}, "msgs": {"message"}, "dir": {"directory"}, "dirs": {"directory"},
	"env": {"environment"}, "info": {"information"}, "config": {"configuration"}, "configs": {"configuration"},
	"doc": {"document"}, "docs": {"document"}, "img": {"image"}, "pic": {"picture"}, "pics": {"picture"},
	"org": {"organization"}, "orgs": {"organization"}, "auth": {"authentication"}, "dm": {"direct", "message"},
	"dms": {"direct", "message"}, "ci": {"continuous", "integration"}, "k8s": {"kubernetes"},
	"sql": {"sql"}, "addr": {"address"}, "url": {"url"}, "urls": {"url"}, "id": {"id"}, "ids": {"id"},
	"calc": {"calculate"}, "stats": {"statistics"}, "perms": {"permission"}, "creds": {"credential"},
}

// stopWords are terms too common in tool descriptions, or in the way
// people ask, to tell tools apart.
var stopWords = set(
	"a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from", "as",
	"is", "are", "be", "been", "was", "were", "it", "its", "this", "that", "these", "those",
	"i", "me", "my", "we", "our", "you", "your", "us", "can", "could", "would", "should", "will",
	"do", "does", "please", "want", "need", "some", "any", "all", "about", "into", "which",
	"what", "whats", "how", "there", "their", "them", "they", "if", "so", "then", "than",
	"mcp", "tool", "using", "use", "via", "given", "specified", "specific", "optional", "e", "g",
	"let", "also", "just", "one", "up", "out", "s", "t", "get",
)

// synonyms are groups of words people use for one another when they ask
// for a tool. A query term also matches the other words of its groups, at
// a lower weight than itself.
var synonymGroups = [][]string{
	{"issue", "ticket", "bug"},
	{"message", "post", "chat", "dm"},
	{"send", "post", "reply"},
	{"file", "document", "doc"},
	{"delete", "remove", "drop", "erase", "trash"},
	{"create", "add", "new", "make", "open", "insert", "generate", "draw"},
	{"list", "show", "enumerate", "browse"},
	{"search", "find", "query", "lookup", "look", "grep"},
	{"repo", "repository", "project"},
	{"pr", "pull", "merge"},
	{"email", "mail", "inbox"},
	{"calendar", "event", "meeting", "schedule"},
	{"update", "edit", "modify", "change", "rename", "set", "close", "reopen"},
	{"read", "view", "fetch", "retrieve", "open"},
	{"user", "member", "person", "people", "account"},
	{"page", "note", "wiki"},
	{"comment", "reply", "feedback"},
	{"image", "picture", "photo", "screenshot", "media"},
	{"remember", "memory", "recall", "knowledge", "know"},
	{"internet", "web", "online"},
	{"nearby", "near", "local", "around"},
	{"shop", "business", "store", "restaurant", "place"},
	{"monitor", "watch", "track"},
	{"forget", "delete"},
	{"browser", "web", "page", "website", "url"},
	{"navigate", "go", "visit", "open"},
	{"table", "database", "db", "sql"},
	{"run", "execute", "exec"},
	{"customer", "client"},
	{"refund", "reimburse", "return"},
	{"charge", "payment", "pay"},
	{"invoice", "bill"},
	{"branch", "ref"},
	{"commit", "change"},
	{"directory", "folder", "dir"},
	{"move", "rename"},
	{"channel", "room"},
	{"entity", "node"},
	{"relation", "link", "edge"},
	{"key", "value", "cache"},
	{"place", "location", "address"},
	{"direction", "route"},
	{"scrape", "crawl", "extract"},
	{"click", "press", "tap"},
	{"type", "fill", "enter"},
	{"content", "text", "body"},
}

// synonyms maps a term to the other terms of its groups.
var synonyms = func() map[string][]string {
	m := map[string][]string{}
	for _, words := range synonymGroups {
		var g []string
		for _, w := range words {
			g = append(g, terms(w)...)
		}
		for _, a := range g {
			for _, b := range g {
				if a != b && !contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}()

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
