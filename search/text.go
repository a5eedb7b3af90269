package search

import (
	"strings"
	"unicode"
)

// terms splits text into normalized terms: words split at anything not a
// letter or digit, at snake_case, camelCase and dots, lower-cased, stop
// words dropped, plurals stemmed.
func terms(text string) []string {
	var out []string
	for _, w := range words(text) {
		w = stem(strings.ToLower(w))
		if w == "" || stopWords[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// words splits text at non-alphanumerics and camelCase boundaries
// ("listPullRequests" → list, Pull, Requests; "HTTPServer" → HTTP, Server).
func words(text string) []string {
	var out []string
	rs := []rune(text)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i) // fooBar
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i) // HTTPServer
			start = i
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush(i) // v2, s3 stay apart from their digits
			start = i
		}
	}
	flush(len(rs))
	return out
}

// stem strips the plural endings English tool descriptions use, and a few
// verb endings, lightly: "issues" → "issue", "repositories" →
// "repository", "searching" → "search". Short words stay as they are.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	if s, ok := irregular[w]; ok {
		return s
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		return undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		// "closed", "created" → close, create; "listed", "added" → list, add.
		if c, v := w[len(w)-3], w[len(w)-4]; strings.IndexByte("svzctg", c) >= 0 && strings.IndexByte("aeiou", v) >= 0 {
			return w[:len(w)-1]
		}
		return undouble(w[:len(w)-2])
	}
	return w
}

// undouble drops the doubled consonant a suffix left ("running" → "run").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// irregular holds the forms stem would get wrong.
var irregular = map[string]string{
	"children": "child", "people": "person", "indices": "index", "indexes": "index",
	"aliases": "alias", "statuses": "status", "analyses": "analysis", "data": "data",
	"this": "this", "news": "news", "series": "series", "address": "address",
	"addresses": "address", "access": "access", "process": "process", "processes": "process",
	"during": "during", "string": "string", "strings": "string", "thing": "thing", "things": "thing",
	"nothing": "nothing", "something": "something", "anything": "anything", "everything": "everything",
	"bring": "bring", "pricing": "price", "billing": "bill", "need": "need", "seed": "seed", "speed": "speed",
	"embed": "embed", "feed": "feed", "red": "red", "shred": "shred", "hundred": "hundred", "based": "base",
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
	for _, g := range synonymGroups {
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
