// Package mimetext reads the text of the email connector's messages: it
// picks the part a message's text comes from (text/plain, else text/html
// turned into text), lists the parts that are files, undoes transfer
// encodings and charsets, and cuts texts and snippets on rune boundaries.
package mimetext

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-message/charset"

	"github.com/legate-mcp/legate/connectors/htmltext"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// SnippetRunes is the length of a search result's snippet.
const SnippetRunes = 200

// WordDecoder decodes RFC 2047 headers in any charset go-message knows.
var WordDecoder = &mime.WordDecoder{CharsetReader: charset.Reader}

// TextPart is the part of a message its text is read from.
type TextPart struct {
	Path     []int
	HTML     bool
	Encoding string
	Charset  string
	Size     uint32
}

// ChooseText picks the part a message's text comes from: the first
// text/plain part that is not an attachment, else the first text/html
// one (converted to text). ok is false for a message without text.
func ChooseText(bs imap.BodyStructure) (tp TextPart, ok bool) {
	if bs == nil {
		return TextPart{}, false
	}
	var plain, htm *TextPart
	bs.Walk(func(path []int, part imap.BodyStructure) bool {
		sp, single := part.(*imap.BodyStructureSinglePart)
		if !single {
			return true
		}
		if d := sp.Disposition(); d != nil && strings.EqualFold(d.Value, "attachment") {
			return true
		}
		t := &TextPart{Path: append([]int(nil), path...), Encoding: strings.ToLower(sp.Encoding), Charset: sp.Params["charset"], Size: sp.Size}
		switch sp.MediaType() {
		case "text/plain":
			if plain == nil {
				plain = t
			}
		case "text/html":
			if htm == nil {
				t.HTML = true
				htm = t
			}
		}
		return true
	})
	switch {
	case plain != nil:
		return *plain, true
	case htm != nil:
		return *htm, true
	}
	return TextPart{}, false
}

// FilePart is an attachment and the part of the message it is ("2", "1.2").
type FilePart struct {
	model.Attachment
	Part string `json:"part"`
}

// Attachments lists the parts of bs that are files: those with a
// filename, or an attachment disposition, except the text part itself.
func Attachments(bs imap.BodyStructure, text TextPart) []FilePart {
	if bs == nil {
		return nil
	}
	var out []FilePart
	bs.Walk(func(path []int, part imap.BodyStructure) bool {
		sp, single := part.(*imap.BodyStructureSinglePart)
		if !single || samePath(path, text.Path) && text.Path != nil {
			return true
		}
		name := sp.Filename()
		d := sp.Disposition()
		isAttachment := d != nil && strings.EqualFold(d.Value, "attachment")
		if name == "" && !isAttachment && sp.MediaType() != "message/rfc822" {
			return true
		}
		size := int64(sp.Size)
		if strings.EqualFold(sp.Encoding, "base64") {
			size = size * 3 / 4 // the decoded size, near enough
		}
		if name == "" {
			name = "(unnamed)"
		}
		ids := make([]string, len(path))
		for i, n := range path {
			ids[i] = strconv.Itoa(n)
		}
		out = append(out, FilePart{model.Attachment{Name: WordDecode(name), MimeType: sp.MediaType(), Size: size}, strings.Join(ids, ".")})
		return true
	})
	return out
}

func samePath(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func WordDecode(s string) string {
	if d, err := WordDecoder.DecodeHeader(s); err == nil {
		return d
	}
	return s
}

// DecodeText turns the (possibly cut) raw bytes of part into text: the
// transfer encoding undone, the charset converted to UTF-8, HTML turned
// into plain text. A cut base64 or quoted-printable tail is dropped.
func DecodeText(raw []byte, part TextPart) string {
	var b []byte
	switch part.Encoding {
	case "base64":
		clean := bytes.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, raw)
		clean = clean[:len(clean)/4*4]
		b = make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
		n, _ := base64.StdEncoding.Decode(b, clean)
		b = b[:n]
	case "quoted-printable":
		b, _ = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
	default:
		b = raw
	}
	cs := strings.ToLower(part.Charset)
	if cs != "" && cs != "utf-8" && cs != "us-ascii" {
		if r, err := charset.Reader(cs, bytes.NewReader(b)); err == nil {
			if conv, err := io.ReadAll(r); err == nil || len(conv) > 0 {
				b = conv
			}
		}
	}
	s := strings.ToValidUTF8(string(httpkit.TrimPartialRune(b)), "\uFFFD")
	if part.HTML {
		s = htmltext.Text(s)
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// Snippet is the first SnippetRunes runes of text on one line.
func Snippet(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= SnippetRunes {
		return s
	}
	r := []rune(s)[:SnippetRunes]
	return strings.TrimSpace(string(r)) + "…"
}

// CutText cuts s to at most max bytes on a rune boundary.
func CutText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max], true
}
