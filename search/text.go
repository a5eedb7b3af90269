package search

import (
	"regexp"
	"slices"
	"strings"
	"sync"
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
	return appendWordTerms(out, words(text), cache)
}

// appendWordTerms appends the terms of words ws to out.
func appendWordTerms(out []string, ws []string, cache map[string]string) []string {
	for _, w := range ws {
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
	if strings.ContainsAny(text, "-_") {
		text = compounds.Replace(text)
	}
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

// compounds are words written with a hyphen or an underscore whose parts
// alone say nothing (or are stop words: "to-do"), written as one.
var compounds = strings.NewReplacer("to-do", "todo", "To-do", "Todo", "To-Do", "Todo", "to_do", "todo",
	"data-source", "datasource", "data_source", "datasource", "data source", "datasource", "Data source", "Datasource")

// irregular holds the forms the stemmer would leave apart or bring
// together wrongly.
var irregular = map[string]string{
	"children": "child", "people": "person", "indices": "index",
	"data": "data", "news": "news",
	// "mail", "e-mail" (whose "e" is a stop word) and "email" are one word.
	"mail": "email", "mails": "email", "mailed": "email",
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
	"dms": {"direct", "message"}, "ci": {"continuous", "integration", "workflow"}, "k8s": {"kubernetes"},
	"addr": {"address"}, "urls": {"url"}, "ids": {"id"},
	"calc": {"calculate"}, "stats": {"statistics"}, "perms": {"permission"}, "creds": {"credential"},
	"retitle": {"rename", "title"}, "subfolder": {"folder"}, "subfolders": {"folder"},
	"subdirectory": {"directory"}, "subdirectories": {"directory"}, "subdir": {"directory"}, "subdirs": {"directory"},
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
	"everything", "anything", "something", "nothing", "whoever", "whatever", "anyone", "someone", "anybody", "somebody",
)

// synonymGroups are groups of words people use for one another when they
// ask for a tool: the verbs of the usual actions (create, read, list,
// update, delete, search, send, run…) and the nouns of the usual
// objects (issue, message, file, repository, user…), general rather than
// fitted to one set of requests. A query term also matches the other
// words of its groups, at a lower weight than itself.
var synonymGroups = [][]string{
	// Actions.
	{"create", "add", "new", "make", "insert", "generate", "open", "start", "register", "build", "draw", "setup"},
	{"read", "get", "view", "fetch", "retrieve", "open", "show", "see", "display", "inspect", "describe", "detail", "check", "grab"},
	{"list", "show", "enumerate", "browse", "all"},
	{"update", "edit", "modify", "change", "set", "patch", "alter", "adjust", "rename", "replace", "fix", "bump", "sync", "swap"},
	{"delete", "remove", "drop", "erase", "trash", "destroy", "purge", "discard", "rid", "forget", "clear", "scrub", "wipe", "bin", "scrap", "ditch", "nuke"},
	{"search", "find", "query", "lookup", "look", "locate", "grep", "seek", "discover"},
	{"send", "post", "reply", "notify", "tell", "inform", "announce", "share", "ping"},
	{"run", "execute", "exec", "trigger", "invoke", "launch"},
	{"stop", "cancel", "halt", "kill", "terminate", "end", "close"},
	{"download", "fetch", "save"},
	{"upload", "attach", "push"},
	{"copy", "duplicate", "clone", "fork"},
	{"move", "relocate", "rename", "transfer"},
	{"remember", "save", "store", "record", "keep", "memory", "recall", "knowledge", "know"},
	{"comment", "note", "annotate", "remark", "reply", "feedback"},
	{"approve", "review", "accept"},
	{"update", "close", "reopen"},
	{"navigate", "go", "visit", "open", "browse", "load"},
	{"click", "press", "tap", "select", "hit"},
	{"type", "fill", "enter", "input"},
	{"scrape", "crawl", "extract", "collect", "harvest"},
	{"monitor", "watch", "track", "watcher"},
	{"convert", "transform", "translate", "parse"},
	{"calculate", "compute", "sum", "count"},
	// Objects.
	{"issue", "ticket", "bug", "task", "incident", "problem", "defect", "crash", "tracker"},
	{"message", "chat", "dm", "text", "post"},
	{"file", "document", "doc", "attachment"},
	{"directory", "folder", "dir", "path"},
	{"repo", "repository", "project", "codebase", "library", "crate"},
	{"pull", "merge"},
	{"user", "member", "person", "people", "account", "profile", "teammate", "colleague", "employee", "everyone", "who"},
	{"page", "note", "wiki"},
	{"email", "mail", "inbox", "gmail"},
	{"database", "table", "sql", "schema", "datasource"},
	{"image", "picture", "photo", "screenshot", "illustration", "art", "drawing", "media"},
	{"internet", "web", "online", "website", "site"},
	{"browser", "web", "page", "website", "url", "tab"},
	{"place", "location", "address", "venue", "nearby", "near", "nearest", "local", "around", "spot"},
	{"shop", "business", "store", "restaurant", "cafe", "pharmacy", "hotel", "place", "venue"},
	{"customer", "client", "buyer"},
	{"charge", "payment", "pay", "transaction", "paid"},
	{"refund", "reimburse"},
	{"invoice", "bill", "receipt"},
	{"spreadsheet", "sheet", "excel", "cell", "row", "column"},
	{"calendar", "event", "meeting", "appointment", "schedule"},
	{"channel", "room", "group"},
	{"thread", "conversation", "discussion"},
	{"entity", "node", "fact"},
	{"relation", "link", "edge", "relationship"},
	{"key", "value", "cache"},
	{"direction", "route", "travel", "drive", "distance"},
	{"content", "text", "body", "contain"},
	{"command", "shell", "terminal", "script", "program"},
	{"machine", "host", "system", "server", "computer", "os"},
	{"disk", "storage", "space", "drive"},
	{"error", "exception", "failure", "crash", "broke", "broken", "red"},
	{"environment", "variable", "setting", "configuration"},
	{"commit", "change"},
	{"branch", "ref"},
	{"paper", "article", "research", "publication", "study"},
	{"geocode", "coordinate", "latitude", "longitude", "lat", "lng"},
	{"elevation", "altitude", "height"},
	{"select", "choose", "pick", "dropdown", "option"},
	{"key", "keyboard", "keystroke", "escape", "esc", "shortcut"},
	{"dialog", "alert", "popup", "modal", "confirm", "prompt"},
	{"reaction", "emoji", "react"},
	{"merge", "squash"},
	{"write", "save"},
	{"network", "ip", "interface", "dns"},
	{"echo", "repeat"},
	{"allow", "permit"},
	{"subscription", "subscribed", "subscriber"},
	{"knowledge", "runbook", "handbook", "playbook", "policy"},
	{"column", "property"},
	{"schedule", "queue", "queued"},
	{"code", "defined", "definition", "declared", "implemented"},
	{"structure", "layout", "hierarchy", "tree"},
	{"reply", "answer", "response", "respond"},
	{"size", "largest", "biggest", "large"},
	{"dispute", "chargeback"},
	{"release", "version"},
	{"workflow", "pipeline", "build", "job"},
}

// phrasalVerbs are the verbs, and a few phrases, of two or three words a
// request may use, read as one ("keep an eye on" → monitor).
var phrasalVerbs = map[string]string{
	"set up": "setup", "look up": "lookup", "get rid of": "delete", "sign up": "register",
	"log in": "login", "sign in": "login", "log out": "logout", "sign out": "logout",
	"find out": "find", "fill in": "fill", "fill out": "fill", "turn on": "enable", "turn off": "disable",
	"shut down": "stop", "clean up": "delete", "write down": "note", "check out": "checkout",
	"keep an eye": "monitor", "say back": "echo", "above sea level": "elevation", "lat long": "coordinates", "lat and long": "coordinates", "lat lng": "coordinates", "lat and lng": "coordinates", "open source": "repository",
	"leave a note": "comment", "lined up": "schedule", "for later": "remember", "from before": "remember", "leave a comment": "comment", "going on": "history", "don t forget": "remind", "dont forget": "remind", "been saying": "history", "latest on": "news", "what s in": "content", "what s inside": "content", "checkout url": "payment link", "checkout link": "payment link",
	"edit access": "share", "edit rights": "share", "view access": "share",
	"give back": "refund", "pay back": "refund", "drop down": "dropdown", "to do": "todo",
	"look for": "search", "hunt for": "search", "dig up": "search", "dig through": "search", "dig around": "search", "pull up": "show", "bring up": "show", "pull down": "download",
	"how far": "distance", "out of room": "space", "room left": "space", "room is left": "space", "how long": "duration", "how big": "size", "how large": "size", "hold on": "wait", "laid out": "structure",
	"to the bottom": "append", "at the bottom": "append", "to the end": "append", "at the end": "append",
}

// In a request, a URL, an email address, a file's name, a #channel or an
// @mention says what it is about better than its words do ("https",
// "example", "com"), which are names, not what the request asks for.
// They, the synonyms and the action classes are built at the first query,
// not as the package initialises: every binary links this package, and
// most processes never search (they took 4,000 allocations at every start).
var (
	urlPattern       = lazyRegexp(`\b(?:https?|ftp)://\S+|\bwww\.\S+`)
	domainPattern    = lazyRegexp(`\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|app|ai|co|edu|gov|info|biz|us|uk|de|fr|eu)\b(?:/\S*)?`)
	emailPattern     = lazyRegexp(`\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b`)
	filePattern      = lazyRegexp(`\b(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(txt|md|markdown|json|ya?ml|toml|ini|csv|tsv|xlsx?|docx?|pdf|png|jpe?g|gif|svg|log|html?|xml|go|py|js|ts|java|rb|rs|c|h|cpp|sh|sql|zip|tar|gz|conf|cfg)\b`)
	channelPattern   = lazyRegexp(`(?:^|\s)#[a-z][\w-]*`)
	numberPattern    = lazyRegexp(`(?:^|\s)(?:[\w.-]+/[\w.-]+)?#\d+\b`)
	emojiPattern     = lazyRegexp(`:[a-z][a-z0-9_+-]*:`)
	latLngPattern    = lazyRegexp(`-?\b\d{1,3}\.\d+°?\s*[ns]?,\s*-?\d{1,3}\.\d+°?\s*[ew]?\b`)
	mentionPattern   = lazyRegexp(`(?:^|\s)@[a-z][\w.-]*`)
	rangePattern     = lazyRegexp(`\b[a-z]{1,3}[0-9]+:[a-z]{1,3}[0-9]+\b`)
	dirPattern       = lazyRegexp(`(?:^|\s)(?:~|\.\.?)?/(?:[\w.-]+/)*|\b[\w.-]+/[\w.-]+/(?:[\w.-]+/)*`)
	codePattern      = lazyRegexp(`\b\w*[a-z][A-Z]\w*\.\w+|\b\w+\.\w*[a-z][A-Z]\w*|\b\w+\(\)`)
	apiMethodPattern = lazyRegexp(`\b(?:GET|POST|PUT|PATCH|DELETE)\b`)
	methodPattern    = lazyRegexp(`\b(?:GET|POST|PUT|PATCH|DELETE|HEAD)\s+(?:/|https?://)`)
	sumPattern       = lazyRegexp(`\d\s*[+*×÷]\s*\d|\badd\s+-?\d[\d,.]*\s+(?:and|to)\s+-?\d|\d\s+plus\s+-?\d`)
	dotfilePattern   = lazyRegexp(`(?:^|\s)\.[a-z][a-z0-9_-]*(?:\.[a-z0-9]+)*\b/?`)
	moneyPattern     = lazyRegexp(`[$€£]\s?\d[\d,.]*(?:\s*/\s*(?:mo|month|yr|year)\b)?`)
	sizePattern      = lazyRegexp(`\b\d{2,5}\s*[x×]\s*\d{2,5}\b`)
	branchPattern    = lazyRegexp(`\b(?:release|feature|hotfix|bugfix|fix|chore|feat|dev|develop)/[\w.-]+\b`)
	envNamePattern   = lazyRegexp(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)
	hexPattern       = lazyRegexp(`\b[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b`)
	stripePattern    = lazyRegexp(`\b(?:cus|sub|in|pi|ch|re|prod|price|dp|du|plink|pm|cs|po|acct|txn|evt|seti)_[a-z0-9]*[0-9][a-z0-9]*\b`)
)

// stripeKinds are the objects Stripe's ids name by their prefix
// (cus_NffrFeUfNV2Hib is a customer); an id has a digit and eight
// characters or more after it (sub_categories is no subscription).
var stripeKinds = map[string]string{
	"cus": "customer", "sub": "subscription", "in": "invoice", "pi": "payment intent", "ch": "charge", "re": "refund",
	"prod": "product", "price": "price", "dp": "dispute", "du": "dispute", "plink": "payment link", "pm": "payment method",
	"cs": "checkout session", "po": "payout", "acct": "account", "txn": "balance transaction", "evt": "event", "seti": "setup intent",
}

// isEmoji reports whether r is a pictograph or symbol people use as an
// emoji (✅, 👍, 🎉).
func isEmoji(r rune) bool {
	return r >= 0x1F300 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF
}

// fileKinds are the words a file's extension adds to "file".
var fileKinds = map[string]string{
	"txt": "text", "md": "markdown", "markdown": "markdown", "log": "log", "csv": "spreadsheet", "tsv": "spreadsheet",
	"xls": "spreadsheet", "xlsx": "spreadsheet", "pdf": "pdf", "png": "image", "jpg": "image", "jpeg": "image",
	"gif": "image", "svg": "image", "html": "html", "htm": "html", "sql": "sql", "zip": "archive", "tar": "archive", "gz": "archive",
}

// queryWords are the lower-cased words of a request, a latitude and
// longitude ("48.8584, 2.2945") read as "coordinates", a URL or a bare
// domain as "url", an email address as "email", a file's name as "file"
// (and its kind), a dotfile's (.env.example) too, a #channel as
// "channel", #212 as "issue or pull request", an @mention as "user",
// :tada: and ✅ as "emoji", 375x812 as a size, $29/month as an amount,
// "let … know" as "notify", "where…" as a request to find, "file a bug"
// as an issue created, "remember…" as memory, a page's text taken from a
// URL as scraped, "turn … into" as convert, a spreadsheet's A1:F20 as
// "cell range", a folder's path (~/code/api, /data/exports/) as "path",
// an HTTP method before a path ("GET /orders/8812") as "http request", a
// sum ("48213 + 9987", "add 48213 and 9987") as "sum", a Stripe id
// (sub_1MabcDEF) as the object it names, a message sent "tomorrow" or "at
// 9am" as scheduled, something added to a sheet as a row appended, a way
// walked, biked or driven "from … to …" as directions, quoted words
// looked for "anywhere" as text to find, a name as code writes it
// (legacyAuth.verifyToken) as code, a URL with a browser as a page
// navigated to, its phrasal verbs as one word.
func queryWords(query string) []string {
	var extra []string
	if strings.ContainsRune(query, '/') && methodPattern().MatchString(query) ||
		(strings.Contains(query, "API") || strings.Contains(query, "api")) && apiMethodPattern().MatchString(query) {
		extra = append(extra, "http", "request")
	}
	// "DATABASE_URL and STRIPE_KEY": a name in capitals and underscores
	// is a variable's, not words.
	if strings.ContainsRune(query, '_') {
		query = envNamePattern().ReplaceAllString(query, " variable ")
	}
	// "where do we call legacyAuth.verifyToken?": a name as code writes
	// it (camelCase beside a dot, a call) is code's.
	if strings.ContainsAny(query, ".(") && codePattern().MatchString(query) {
		extra = append(extra, "code")
	}
	query = strings.ToLower(query)
	if (strings.ContainsAny(query, "+*×÷") || strings.Contains(query, "add ") || strings.Contains(query, " plus ")) && sumPattern().MatchString(query) {
		extra = append(extra, "sum", "calculate")
	}
	// Each pattern needs a character most requests do not have: scanning
	// for it first keeps a search's cost (P9).
	if strings.ContainsAny(query, ".:") {
		query = latLngPattern().ReplaceAllString(query, " coordinates ")
		query = urlPattern().ReplaceAllString(query, " url ")
		query = emailPattern().ReplaceAllString(query, " email ")
		query = domainPattern().ReplaceAllString(query, " website url ")
		query = rangePattern().ReplaceAllString(query, " cell range ")
		query = filePattern().ReplaceAllStringFunc(query, func(f string) string {
			return " " + fileKinds[f[strings.LastIndexByte(f, '.')+1:]] + " file "
		})
		query = dotfilePattern().ReplaceAllStringFunc(query, func(f string) string {
			if strings.HasSuffix(f, "/") {
				return f // a folder's path: .github/workflows/
			}
			return " file "
		})
	}
	if strings.ContainsAny(query, "$€£") {
		query = moneyPattern().ReplaceAllString(query, " amount price ")
	}
	if strings.ContainsAny(query, "x×") && strings.ContainsAny(query, "0123456789") {
		query = sizePattern().ReplaceAllString(query, " width height size ")
	}
	if strings.ContainsRune(query, '_') {
		query = stripePattern().ReplaceAllStringFunc(query, func(id string) string {
			prefix, rest, _ := strings.Cut(id, "_")
			if len(rest) < 8 {
				return id
			}
			return " " + stripeKinds[prefix] + " "
		})
	}
	if strings.ContainsRune(query, '/') {
		query = branchPattern().ReplaceAllString(query, " branch ")
		query = dirPattern().ReplaceAllString(query, " path ")
	}
	// "page 8c1f2e4a5b6c…", "job 7f3c2a9e-1b4d-…": an id, whose letters
	// and digits are no words.
	if strings.ContainsAny(query, "0123456789") {
		query = hexPattern().ReplaceAllStringFunc(query, func(id string) string {
			if strings.IndexAny(id, "0123456789") < 0 || strings.IndexAny(id, "abcdef") < 0 {
				return id
			}
			return " id "
		})
	}
	if strings.ContainsRune(query, '#') {
		query = channelPattern().ReplaceAllString(query, " channel ")
		query = numberPattern().ReplaceAllString(query, " issue or pull request ")
	}
	if strings.ContainsRune(query, ':') {
		query = emojiPattern().ReplaceAllString(query, " emoji ")
	}
	if strings.ContainsRune(query, '@') {
		query = mentionPattern().ReplaceAllString(query, " user ")
	}
	if strings.IndexFunc(query, isEmoji) >= 0 { // "slap a ✅ on it"
		var b strings.Builder
		for _, r := range query {
			if isEmoji(r) {
				b.WriteString(" emoji ")
			} else {
				b.WriteRune(r)
			}
		}
		query = b.String()
	}
	// "…got fixed by yesterday's deploy, close it out": a clause opens
	// with a verb's place, as after "and".
	query = clauseBreaks(query)
	ws := words(query)
	out := ws[:0]
	for i := 0; i < len(ws); i++ {
		if i+2 < len(ws) {
			if v, ok := phrasalVerbs[ws[i]+" "+ws[i+1]+" "+ws[i+2]]; ok {
				out, i = append(out, v), i+2
				continue
			}
		}
		if i+1 < len(ws) {
			if v, ok := phrasalVerbs[ws[i]+" "+ws[i+1]]; ok {
				out, i = append(out, v), i+1
				continue
			}
		}
		out = append(out, ws[i])
	}
	// "the open pull requests", "is it still open": open as a state,
	// not the verb (open a ticket, open a file).
	for i, w := range out {
		if w == "open" && i > 0 && !verbBefore[out[i-1]] &&
			(i+1 < len(out) && trackedNouns[out[i+1]] || stateVerbs[out[i-1]] && slices.ContainsFunc(out, func(w string) bool { return trackedNouns[w] })) {
			out[i] = "state"
		}
	}
	// "every URL on docs.acme.com about webhooks", "just the links": a
	// site's URLs asked for are URLs enumerated.
	if slices.ContainsFunc(out, func(w string) bool { return w == "urls" || w == "links" }) &&
		slices.ContainsFunc(out, func(w string) bool { return w == "every" || w == "all" || w == "list" || w == "which" || w == "what" }) {
		out = append(out, "enumerate")
	}
	// "read a.yaml, b.yaml and c.yaml together": three files or more
	// named are several files.
	if n := strings.Count(" "+strings.Join(out, " ")+" ", " file "); n >= 3 {
		out = append(out, "multiple")
	}
	// "the README of torvalds/linux", "our Dockerfile": files known by
	// name, without an extension.
	if slices.ContainsFunc(out, func(w string) bool { return namedFiles[w] }) {
		out = append(out, "file")
	}
	// "where is the roadmap?" asks to find it.
	if len(out) > 0 && (out[0] == "where" || out[0] == "wheres") {
		out = append(out, "find")
	}
	// "email the invoice to…", "file a bug…": a noun in a verb's place
	// says the action too.
	for i, w := range out {
		if v, ok := verbUses[w]; ok && (i == 0 || verbBefore[out[i-1]]) {
			out = append(out, v)
			break
		}
	}
	// "file a bug", "log that as a bug", "log it in the tracker": to
	// record a problem is to create an issue.
	for i, w := range out {
		if !problemVerbs[w] {
			continue
		}
		if slices.ContainsFunc(out[i+1:min(i+6, len(out))], func(w string) bool { return problemNouns[w] }) {
			out = append(out, "create", "issue")
			break
		}
	}
	// "remember that…", "what have you stored about…", "forget what you
	// noted": what is kept for later is memory.
	if slices.ContainsFunc(out, func(w string) bool { return memoryWords[w] }) {
		out = append(out, "memory")
	}
	// "the text of this web page as markdown", "the pricing table off
	// https://…": a page's content taken is a page scraped.
	if (slices.Contains(out, "url") || slices.Contains(out, "webpage") || slices.Contains(out, "page") && slices.Contains(out, "web")) &&
		slices.ContainsFunc(out, func(w string) bool { return pageContent[w] }) {
		out = append(out, "scrape")
	}
	// "add my taxi to the expenses spreadsheet": what is added to a
	// sheet is a row appended.
	for i, w := range out {
		if (w == "add" || w == "log") && (i == 0 || verbBefore[out[i-1]]) &&
			slices.ContainsFunc(out[i+1:], func(w string) bool { return sheetWords[w] }) {
			out = append(out, "append", "row")
			break
		}
	}
	// "point the browser at https://…": a URL and a browser is a page
	// navigated to.
	if slices.Contains(out, "url") && slices.Contains(out, "browser") {
		out = append(out, "navigate")
	}
	// "does the page say 'Out of stock' anywhere?": quoted words looked
	// for are text to find.
	if slices.Contains(out, "anywhere") && strings.ContainsAny(query, "'\"‘“") {
		out = append(out, "find", "text")
	}
	// "how do I bike from Utrecht to Amsterdam": a way travelled from
	// one place to another is directions.
	if slices.ContainsFunc(out, func(w string) bool { return travelWords[w] }) {
		if i := slices.Index(out, "from"); i >= 0 && slices.Contains(out[i+1:], "to") {
			out = append(out, "directions")
		}
	}
	// "turn the PDF into text": what is turned into another form is
	// converted.
	for i, w := range out {
		if w == "turn" && slices.Contains(out[i+1:min(i+8, len(out))], "into") {
			out = append(out, "convert")
			break
		}
	}
	// "post in #standup at 9am tomorrow": a message sent at a later time
	// is scheduled.
	if slices.ContainsFunc(out, func(w string) bool { return laterWords[w] }) &&
		slices.ContainsFunc(out, func(w string) bool { return sendWords[w] }) {
		out = append(out, "schedule")
	}
	out = append(out, extra...)
	// "let the team know", "let everyone in #general know".
	for i, w := range out {
		if w != "let" {
			continue
		}
		for j := i + 1; j < len(out) && j <= i+5; j++ {
			if out[j] == "know" {
				out[i], out[j] = "notify", "let"
				break
			}
		}
	}
	return out
}

// actions are the classes of what a tool does, by the verbs that say it
// in a tool's name or a request: a request's verb that names the class
// of the tool's own verb counts for the tool (verbMatch).
var actions = [][]string{
	{"create", "add", "new", "make", "insert", "generate", "open", "register", "build", "draw", "write", "post", "start", "setup"},
	{"get", "read", "view", "fetch", "retrieve", "open", "show", "see", "display", "inspect", "describe", "detail", "info", "check"},
	{"list", "show", "enumerate", "browse"},
	{"update", "edit", "modify", "change", "set", "patch", "alter", "adjust", "rename", "replace", "fix", "close", "reopen", "toggle", "move"},
	{"delete", "remove", "drop", "erase", "trash", "destroy", "purge", "discard", "forget", "clear"},
	{"search", "find", "query", "lookup", "look", "locate", "grep", "seek", "discover"},
	{"send", "post", "reply", "notify", "tell", "inform", "announce", "share", "ping"},
	{"run", "execute", "exec", "trigger", "invoke", "launch", "call", "start"},
	{"stop", "cancel", "halt", "kill", "terminate", "end"},
	{"merge", "ship", "land"},
	{"comment", "note", "annotate", "remark", "reply"},
	{"approve", "review", "accept"},
	{"download", "fetch", "pull"},
	{"upload", "attach", "push"},
	{"copy", "duplicate", "clone", "fork"},
}

// readActions are the classes a question without a verb asks for
// ("what tables are there?"): get, list and search.
const readActions = 1<<1 | 1<<2 | 1<<5

// verbBefore are the words after which a request's word is in a verb's
// place ("please open…", "I want to open…", "…and then close…"), as its
// first word is; elsewhere a verb's word is not read as the request's
// action ("show me the open issues").
// verbUses are nouns that, in a verb's place, say an action: a means of
// sending sends by it ("email the invoice to…", "text Bob…").
var verbUses = map[string]string{
	"email": "send", "mail": "send", "text": "send", "message": "send", "dm": "send", "ping": "send", "slack": "send",
}

// pageContent are what a web page's content is taken as.
var pageContent = set("text", "markdown", "content", "contents", "table", "html")

// laterWords name a time to come; sendWords, a message sent.
var (
	laterWords = set("tomorrow", "tonight", "am", "pm", "later")
	sendWords  = set("post", "send", "message", "remind", "reminder", "tell", "notify", "email", "dm", "ping", "announce")
)

// travelWords are ways of getting somewhere.
var travelWords = set("walk", "walking", "bike", "biking", "cycle", "cycling", "drive", "driving", "commute", "travel", "ride")

// sheetWords name a spreadsheet.
var sheetWords = set("sheet", "spreadsheet", "spreadsheets", "sheets")

// memoryWords ask for what is kept for later.
var memoryWords = set("remember", "remembered", "memorize", "memorized", "memorise", "memorised", "forget", "stored", "noted", "recall")

// problemVerbs and problemNouns: a problem filed, logged, reported or
// raised is an issue created.
var (
	problemVerbs = set("file", "log", "report", "raise")
	problemNouns = set("bug", "bugs", "issue", "ticket", "defect", "tracker", "problem")
)

var verbBefore = set("and", "then", "to", "please", "you", "i", "we", "also", "just", "now", "first", "should", "must", "can", "could", "will", "would")

// trackedNouns are the things "open" is the state of ("the open pull
// requests", "which PRs are still open"), stateVerbs the words before it
// as a state.
var (
	stateVerbs   = set("are", "is", "still", "remain", "remains", "stay", "stays")
	trackedNouns = set("pull", "pulls", "pr", "prs", "issue", "issues", "ticket", "tickets", "bug", "bugs", "merge", "mr", "mrs", "incident", "incidents")
)

// clauseBreaks is q with an "and" where two clauses meet: at a comma, a
// semicolon or a dash, and at a sentence's end (a full stop after a word,
// not the dot of ". file" left where a path was read).
func clauseBreaks(q string) string {
	isBreak := func(i int) bool {
		c := q[i]
		return (c == ',' || c == ';' || c == '.' && i > 0 && q[i-1] != ' ') && i+1 < len(q) && q[i+1] == ' '
	}
	first := -1
	for i := range len(q) {
		if isBreak(i) {
			first = i
			break
		}
	}
	if first >= 0 {
		b := make([]byte, 0, len(q)+16)
		b = append(b, q[:first]...)
		for i := first; i < len(q); i++ {
			if isBreak(i) {
				b = append(b, " and"...)
			} else {
				b = append(b, q[i])
			}
		}
		q = string(b)
	}
	if strings.Contains(q, " — ") || strings.Contains(q, " – ") {
		q = dashes.Replace(q)
	}
	return q
}

// dashes are the dashes between clauses.
var dashes = strings.NewReplacer(" — ", " and ", " – ", " and ")

// namedFiles are files known by their name alone.
var namedFiles = set("readme", "dockerfile", "makefile", "changelog", "procfile", "jenkinsfile", "gemfile", "vagrantfile", "codeowners")

// questionWords open a request that asks rather than acts.
var questionWords = set("what", "whats", "which", "who", "whose", "when", "where", "how", "is", "are", "did", "does", "do", "any", "was", "were")

// actionClasses maps a stemmed verb to the bit set of its classes.
var actionClasses = sync.OnceValue(func() map[string]uint32 {
	m := map[string]uint32{}
	for c, words := range actions {
		for _, w := range words {
			for _, t := range words2terms(w) {
				m[t] |= 1 << c
			}
		}
	}
	return m
})

// words2terms is terms without dropping stop words ("get" is one).
func words2terms(w string) []string {
	var out []string
	for _, x := range words(w) {
		out = append(out, stem(strings.ToLower(x)))
	}
	return out
}

// synonyms maps a term to the other terms of its groups.
var synonyms = sync.OnceValue(func() map[string][]string {
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
})

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

// lazyRegexp returns expr compiled at its first use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
