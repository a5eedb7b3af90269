package httpkit

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/contentcoding"
)

// SnippetBytes is how much of an error body [Snippet] keeps.
const SnippetBytes = 512

// drainBytes bounds what Drain reads: enough to reuse the connection after
// a short answer, not so much that a huge one holds the call.
const drainBytes = 64 << 10

// Drain reads what is left of resp's body, up to a bound, and closes it, so
// that the connection goes back to the pool.
func Drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
	resp.Body.Close()
}

// Snippet returns a one-line excerpt of resp's body for an error message:
// its first SnippetBytes decoded (gzip, deflate), masked with secrets
// (which may be nil), spaces collapsed, " …" added when cut. It is "" when
// the body is not text or its coding cannot be undone, for then it cannot
// be checked for secrets. It reads the body but does not close it.
func Snippet(resp *http.Response, secrets *legate.Secrets) string {
	if contentcoding.DecodeBody(resp) != nil {
		return ""
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, SnippetBytes+utf8.UTFMax))
	// Masked first, as if cut, while a secret at the read limit is still
	// whole or at the very end.
	head = secrets.Mask(head, true)
	cut := len(head) > SnippetBytes
	if cut {
		head = TrimPartialRune(head[:SnippetBytes])
	}
	if !IsText(resp.Header.Get("Content-Type"), head) {
		return ""
	}
	s := strings.Join(strings.Fields(string(head)), " ")
	if cut {
		s += " …"
	}
	return s
}

// IsText reports whether a body of that content type can be shown as
// text: valid UTF-8, and a textual media type (text/*, JSON, XML, YAML,
// forms and the like) or, without a content type, no control characters
// other than tab and line ends. A body cut at a limit is given to it with
// [TrimPartialRune] applied.
func IsText(contentType string, body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	if contentType == "" {
		return !bytes.ContainsFunc(body, func(r rune) bool {
			return r < ' ' && r != '\n' && r != '\r' && r != '\t'
		})
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(strings.ToLower(contentType), ";")
		mt = strings.TrimSpace(mt)
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+yaml"):
		return true
	}
	return textTypes[mt]
}

var textTypes = map[string]bool{
	"application/json": true, "application/xml": true, "application/javascript": true,
	"application/ecmascript": true, "application/x-www-form-urlencoded": true, "application/yaml": true,
	"application/x-yaml": true, "application/toml": true, "application/graphql": true,
	"application/x-ndjson": true, "application/jsonl": true, "application/csv": true, "application/sql": true,
}

// TrimPartialRune drops a multi-byte rune cut in half at the end of b.
func TrimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
