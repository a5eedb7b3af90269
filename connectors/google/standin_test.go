package google_test

import (
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate/connectors/google/internal/discovery"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

// The credentials the stand-in accepts: canaries, which no result, error
// or log may hold.
const (
	clientID     = "1234-legate.apps.googleusercontent.com"
	clientSecret = "GOCSPX-canary5e0d7f1c"
	refreshToken = "1//canary-refresh-9a2b3c"
	// accessPrefix starts every access token the stand-in issues.
	accessPrefix = "ya29.canary-access-"
)

const fullScopes = "https://www.googleapis.com/auth/spreadsheets https://www.googleapis.com/auth/drive"

type file struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	MimeType      string            `json:"mimeType"`
	Size          string            `json:"size,omitempty"`
	Parents       []string          `json:"parents,omitempty"`
	ModifiedTime  string            `json:"modifiedTime,omitempty"`
	CreatedTime   string            `json:"createdTime,omitempty"`
	WebViewLink   string            `json:"webViewLink,omitempty"`
	Trashed       bool              `json:"trashed"`
	Owners        []owner           `json:"owners,omitempty"`
	AppProperties map[string]string `json:"appProperties,omitempty"`
	// Content is the file's bytes, or what a Google file exports as.
	Content string       `json:"-"`
	Perms   []permission `json:"-"`
}

type owner struct {
	EmailAddress string `json:"emailAddress"`
	Me           bool   `json:"me"`
}

type permission struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	Role         string `json:"role"`
	EmailAddress string `json:"emailAddress,omitempty"`
	Domain       string `json:"domain,omitempty"`
}

// standin is Google's token endpoint, Sheets v4 and Drive v3 on httptest,
// on their real paths: /token, /v4/spreadsheets/{id}/values/{range}
// (and {range}:append), /drive/v3/files and /drive/v3/files/{id}.
//
// Its consent endpoints (oauth, under /oauth/: authorize, token, revoke)
// issue tokens per test user; an API call is answered with an access
// token /token issued or a valid one the consent endpoints issued, and
// oauth records the token of each call, in order.
type standin struct {
	srv   *httptest.Server
	oauth *oauthtest.Provider

	mu      sync.Mutex
	issued  []string        // access tokens, in order
	expired map[string]bool // access tokens the API refuses
	refresh string          // the refresh token accepted
	account *rsa.PublicKey  // the service account's key the token endpoint accepts
	claims  []jwtClaims     // of each assertion accepted
	scope   string          // the scope the token endpoint reports
	files   []file          // most recently modified first
	sheets  map[string]map[string][][]any
	docs    map[string]*doc
	// noMarkdown refuses Docs' Markdown export, as Drive did before it
	// had one.
	noMarkdown bool
	writes     map[string]int // performed writes by op: "upload", "share", "doc", "docedit", "update", "create"
	appends    int
	calls      map[string]int
	lastQ      string
	// fault may answer a request first: op is "token", "get", "append",
	// "files" or "file"; n counts that op's requests.
	fault func(op string, n int, w http.ResponseWriter, r *http.Request) bool
	// afterAppend may answer in place of a success, after the append.
	afterAppend func(n int, w http.ResponseWriter, r *http.Request) bool
	// afterWrite may answer in place of a success, after another write
	// (op as in writes).
	afterWrite func(op string, w http.ResponseWriter, r *http.Request) bool
}

func newStandin(t testing.TB) *standin {
	t.Helper()
	s := &standin{expired: map[string]bool{}, refresh: refreshToken, scope: fullScopes,
		sheets: map[string]map[string][][]any{"sheet-1": {"Sheet1": nil}}, calls: map[string]int{},
		docs: map[string]*doc{}, writes: map[string]int{},
		oauth: oauthtest.New(clientID, clientSecret, accessPrefix)}
	mux := http.NewServeMux()
	s.oauth.KeepRefresh = true // Google does not rotate refresh tokens
	s.oauth.Mount(func(p string, h http.HandlerFunc) { mux.HandleFunc(p, h) }, "/oauth")
	mux.HandleFunc("POST /token", s.count("token", s.token))
	mux.HandleFunc("GET /v4/spreadsheets/{id}/values/{rng}", s.wrap("get", s.get))
	mux.HandleFunc("POST /v4/spreadsheets/{id}/values/{rng}", s.wrap("append", s.append))
	mux.HandleFunc("GET /drive/v3/files", s.wrap("files", s.list))
	mux.HandleFunc("GET /drive/v3/files/{id}", s.wrap("file", s.file))
	s.mountDrive(mux)
	s.mountDocs(mux)
	s.mountSheets(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		gerror(w, 404, "Not Found: "+r.URL.Path, "notFound", "NOT_FOUND")
	})
	// Every answer is checked against Google's discovery documents.
	s.srv = httptest.NewServer(discovery.Check(t, "drive/v3", discovery.Check(t, "sheets/v4", discovery.Check(t, "docs/v1", mux))))
	t.Cleanup(s.srv.Close)
	return s
}

// gerror answers a Google API error, in the format with both errors[]
// (Drive) and status (Sheets).
func gerror(w http.ResponseWriter, code int, msg, reason, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "status": status,
		"errors": []map[string]string{{"message": msg, "domain": "global", "reason": reason}},
	}})
}

func (s *standin) count(op string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[op]++
		n := s.calls[op]
		fault := s.fault
		s.mu.Unlock()
		if fault != nil {
			discovery.Fault(w)
			if fault(op, n, w, r) {
				return
			}
			discovery.Unfault(w)
		}
		h(w, r)
	}
}

// wrap counts an API request and checks its access token.
func (s *standin) wrap(op string, h http.HandlerFunc) http.HandlerFunc {
	return s.count(op, func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		_, issued := s.oauth.Bearer(r)
		s.mu.Lock()
		ok := strings.HasPrefix(tok, accessPrefix) && !s.expired[tok] && contains(s.issued, tok)
		s.mu.Unlock()
		if !ok && !issued {
			gerror(w, 401, "Request had invalid authentication credentials. Expected OAuth 2 access token.", "authError", "UNAUTHENTICATED")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		h(w, r)
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (s *standin) requests(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// expireAll makes the API refuse every access token issued so far.
func (s *standin) expireAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.issued {
		s.expired[t] = true
	}
}

func (s *standin) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.PostForm.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer":
		claims, ok := s.assertion(r.PostForm.Get("assertion"))
		if !ok {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
			return
		}
		s.claims = append(s.claims, claims)
		tok := fmt.Sprintf("%s%d-sa", accessPrefix, len(s.issued)+1)
		s.issued = append(s.issued, tok)
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
		return
	case r.PostForm.Get("client_id") != clientID || r.PostForm.Get("client_secret") != clientSecret:
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"The OAuth client was not found."}`)
		return
	case r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("refresh_token") != s.refresh:
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
		return
	}
	tok := fmt.Sprintf("%s%d-x7", accessPrefix, len(s.issued)+1)
	s.issued = append(s.issued, tok)
	json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer", "scope": s.scope})
}

var a1Cells = regexp.MustCompile(`^([A-Z]*)([0-9]*)(?::([A-Z]*)([0-9]*))?$`)

// window is the sheet and the rows and columns (1-based, 0 for open) of
// a range, as Sheets reads it.
type window struct {
	sheet                  string
	row0, row1, col0, col1 int
}

func colNum(s string) int {
	n := 0
	for _, c := range s {
		n = n*26 + int(c-'A'+1)
	}
	return n
}

func colName(n int) string {
	var b []byte
	for ; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('A' + (n-1)%26)}, b...)
	}
	return string(b)
}

func parseWindow(rng string) (window, bool) {
	sheet, cells, ok := strings.Cut(rng, "!")
	if !ok {
		return window{sheet: strings.Trim(rng, "'")}, true
	}
	m := a1Cells.FindStringSubmatch(cells)
	if m == nil {
		return window{}, false
	}
	w := window{sheet: strings.Trim(sheet, "'"), col0: colNum(m[1]), col1: colNum(m[3])}
	w.row0, _ = strconv.Atoi(m[2])
	w.row1, _ = strconv.Atoi(m[4])
	return w, true
}

func formatted(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strings.ToUpper(strconv.FormatBool(v))
	}
	return ""
}

func (s *standin) sheet(w http.ResponseWriter, r *http.Request, rng string) (window, [][]any, bool) {
	win, ok := parseWindow(rng)
	s.mu.Lock()
	book, found := s.sheets[r.PathValue("id")]
	rows, tab := book[win.sheet]
	s.mu.Unlock()
	switch {
	case !found:
		gerror(w, 404, "Requested entity was not found.", "notFound", "NOT_FOUND")
		return window{}, nil, false
	case !ok || !tab:
		gerror(w, 400, "Unable to parse range: "+rng, "badRequest", "INVALID_ARGUMENT")
		return window{}, nil, false
	}
	return win, rows, true
}

func (s *standin) get(w http.ResponseWriter, r *http.Request) {
	win, rows, ok := s.sheet(w, r, r.PathValue("rng"))
	if !ok {
		return
	}
	row0, row1 := max(win.row0, 1), win.row1
	if row1 == 0 || row1 > len(rows) {
		row1 = len(rows)
	}
	var values [][]string
	for i := row0; i <= row1; i++ {
		var row []string
		for j, v := range rows[i-1] {
			if (win.col0 == 0 || j+1 >= win.col0) && (win.col1 == 0 || j+1 <= win.col1) {
				row = append(row, formatted(v))
			}
		}
		values = append(values, row)
	}
	for len(values) > 0 && len(values[len(values)-1]) == 0 {
		values = values[:len(values)-1]
	}
	out := map[string]any{"range": fmt.Sprintf("%s!%s%d:%s%d", win.sheet, colName(max(win.col0, 1)), row0, colName(max(win.col1, 26)), max(row1, row0)), "majorDimension": "ROWS"}
	if len(values) > 0 {
		out["values"] = values
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) append(w http.ResponseWriter, r *http.Request) {
	rng, ok := strings.CutSuffix(r.PathValue("rng"), ":append")
	if !ok {
		gerror(w, 404, "Not Found", "notFound", "NOT_FOUND")
		return
	}
	win, _, ok := s.sheet(w, r, rng)
	if !ok {
		return
	}
	var body struct {
		Values [][]any `json:"values"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Values) == 0 {
		gerror(w, 400, "Invalid JSON payload received.", "badRequest", "INVALID_ARGUMENT")
		return
	}
	s.mu.Lock()
	book := s.sheets[r.PathValue("id")]
	book[win.sheet] = append(book[win.sheet], body.Values...)
	n := len(book[win.sheet])
	n0 := n - len(body.Values) + 1
	s.appends++
	count, after := s.appends, s.afterAppend
	s.mu.Unlock()
	if after != nil && after(count, w, r) {
		return
	}
	width, cells := 0, 0
	rows := make([][]string, len(body.Values))
	for i, r := range body.Values {
		for _, v := range r {
			rows[i] = append(rows[i], formatted(v))
		}
		width, cells = max(width, len(r)), cells+len(r)
	}
	updated := fmt.Sprintf("%s!A%d:%s%d", win.sheet, n0, colName(width), n)
	json.NewEncoder(w).Encode(map[string]any{
		"spreadsheetId": r.PathValue("id"),
		"tableRange":    fmt.Sprintf("%s!A1:%s%d", win.sheet, colName(width), max(n0-1, 1)),
		"updates": map[string]any{
			"spreadsheetId": r.PathValue("id"), "updatedRange": updated, "updatedRows": len(rows),
			"updatedColumns": width, "updatedCells": cells,
			"updatedData": map[string]any{"range": updated, "majorDimension": "ROWS", "values": rows},
		},
	})
}

// rows returns a copy of a sheet's rows, formatted.
func (s *standin) rows(id, sheet string) [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]string
	for _, r := range s.sheets[id][sheet] {
		row := make([]string, len(r))
		for i, v := range r {
			row[i] = formatted(v)
		}
		out = append(out, row)
	}
	return out
}

// fill sets sheet's rows: n rows of cols cells, "r<row>c<col>".
func (s *standin) fill(id, sheet string, n, cols int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := make([][]any, n)
	for i := range rows {
		for j := range cols {
			rows[i] = append(rows[i], fmt.Sprintf("r%dc%d", i+1, j+1))
		}
	}
	if s.sheets[id] == nil {
		s.sheets[id] = map[string][][]any{}
	}
	s.sheets[id][sheet] = rows
}

// seedFiles adds n files, newest first; every third is a spreadsheet in
// the folder folder-1.
func (s *standin) seedFiles(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		f := file{ID: fmt.Sprintf("f%02d", i), Name: fmt.Sprintf("report %02d.txt", i), MimeType: "text/plain", Size: "1024",
			Parents: []string{"root"}, ModifiedTime: fmt.Sprintf("2026-11-%02dT10:00:00.000Z", 28-i%28)}
		if i%3 == 0 {
			f.Name, f.MimeType, f.Size, f.Parents = fmt.Sprintf("budget %02d", i), "application/vnd.google-apps.spreadsheet", "", []string{"folder-1"}
		}
		f.WebViewLink = "https://drive.google.com/file/d/" + f.ID + "/view"
		s.files = append(s.files, f)
	}
}

var (
	nameIs    = regexp.MustCompile(`^name = '((?:[^'\\]|\\.)*)'$`)
	createdGT = regexp.MustCompile(`^createdTime > '([^']*)'$`)
	fullText  = regexp.MustCompile(`^fullText contains '((?:[^'\\]|\\.)*)'$`)
	appProp   = regexp.MustCompile(`^appProperties has \{ key='([^']*)' and value='([^']*)' \}$`)
	inParents = regexp.MustCompile(`^'([^']*)' in parents$`)
	nameHas   = regexp.MustCompile(`^name contains '((?:[^'\\]|\\.)*)'$`)
	mimeIs    = regexp.MustCompile(`^mimeType = '([^']*)'$`)
)

func unescape(s string) string { return strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(s) }

func (s *standin) matches(f file, q string) bool {
	for _, c := range splitAnd(q) {
		switch {
		case strings.HasPrefix(c, "(") && strings.HasSuffix(c, ")"):
			if !s.matches(f, c[1:len(c)-1]) {
				return false
			}
		case c == "'me' in owners":
			if len(f.Owners) == 0 || !f.Owners[0].Me {
				return false
			}
		case nameIs.MatchString(c):
			if f.Name != unescape(nameIs.FindStringSubmatch(c)[1]) {
				return false
			}
		case createdGT.MatchString(c):
			if f.CreatedTime <= createdGT.FindStringSubmatch(c)[1] {
				return false
			}
		case fullText.MatchString(c):
			w := strings.ToLower(unescape(fullText.FindStringSubmatch(c)[1]))
			if !strings.Contains(strings.ToLower(f.Name+" "+f.Content), w) {
				return false
			}
		case appProp.MatchString(c):
			m := appProp.FindStringSubmatch(c)
			if f.AppProperties[m[1]] != m[2] {
				return false
			}
		case c == "trashed = false":
			if f.Trashed {
				return false
			}
		case inParents.MatchString(c):
			if !contains(f.Parents, inParents.FindStringSubmatch(c)[1]) {
				return false
			}
		case nameHas.MatchString(c):
			if !strings.Contains(strings.ToLower(f.Name), strings.ToLower(unescape(nameHas.FindStringSubmatch(c)[1]))) {
				return false
			}
		case mimeIs.MatchString(c):
			if f.MimeType != mimeIs.FindStringSubmatch(c)[1] {
				return false
			}
		case c == "":
		default:
			return false
		}
	}
	return true
}

func (s *standin) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, _ := strconv.Atoi(q.Get("pageSize"))
	if size <= 0 {
		size = 100
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "~!!~AI9FV7"))
		if err != nil {
			gerror(w, 400, "Invalid Value", "invalid", "INVALID_ARGUMENT")
			return
		}
		start = n
	}
	s.mu.Lock()
	s.lastQ = q.Get("q")
	var all []file
	for _, f := range s.files {
		if s.matches(f, q.Get("q")) {
			all = append(all, f)
		}
	}
	s.mu.Unlock()
	start = min(start, len(all))
	end := min(start+size, len(all))
	out := map[string]any{"kind": "drive#fileList", "files": all[start:end]}
	if end < len(all) {
		out["nextPageToken"] = fmt.Sprintf("~!!~AI9FV7%d", end)
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) file(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		if f.ID == r.PathValue("id") {
			if r.URL.Query().Get("alt") == "media" {
				if strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
					gerror(w, 403, "Only files with binary content can be downloaded. Use Export with Docs Editors files.", "fileNotDownloadable", "PERMISSION_DENIED")
					return
				}
				w.Header().Set("Content-Type", f.MimeType)
				io.WriteString(w, f.Content)
				return
			}
			json.NewEncoder(w).Encode(f)
			return
		}
	}
	gerror(w, 404, "File not found: "+r.PathValue("id")+".", "notFound", "NOT_FOUND")
}

// hangUp answers nothing and closes the connection: the answer is lost.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// appendCount is how many appends the stand-in performed.
func (s *standin) appendCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appends
}

// query is the q of the last files.list.
func (s *standin) query() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastQ
}
