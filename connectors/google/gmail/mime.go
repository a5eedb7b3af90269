package gmail

import (
	"bytes"
	"encoding/base64"
	"html"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gm "google.golang.org/api/gmail/v1"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/htmltext"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// header is the value of a message part's header name, "" when absent.
func header(p *gm.MessagePart, name string) string {
	if p == nil {
		return ""
	}
	for _, h := range p.Headers {
		if h != nil && strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// decodeData decodes a part's body data: base64url, padded or not.
func decodeData(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// textOf is a message's text from its parts: the first text/plain part
// that is not an attachment, else the first text/html one converted. It
// returns the text and where it came from.
func textOf(p *gm.MessagePart) (string, string) {
	if part := findPart(p, "text/plain"); part != nil {
		if b, err := decodeData(part.Body.Data); err == nil {
			return normalize(string(b)), "text/plain"
		}
	}
	if part := findPart(p, "text/html"); part != nil {
		if b, err := decodeData(part.Body.Data); err == nil {
			return htmltext.Text(string(b)), "text/html converted to text"
		}
	}
	return "", "none"
}

func findPart(p *gm.MessagePart, mimeType string) *gm.MessagePart {
	if p == nil {
		return nil
	}
	if strings.EqualFold(p.MimeType, mimeType) && p.Filename == "" && p.Body != nil && p.Body.Data != "" {
		return p
	}
	for _, c := range p.Parts {
		if f := findPart(c, mimeType); f != nil {
			return f
		}
	}
	return nil
}

// attachmentsOf lists the parts of message id that are files.
func (t Tools) attachmentsOf(call *connectors.Call, id string, p *gm.MessagePart) []model.Attachment {
	var out []model.Attachment
	var walk func(p *gm.MessagePart)
	walk = func(p *gm.MessagePart) {
		if p == nil {
			return
		}
		if p.Filename != "" && p.Body != nil && p.Body.AttachmentId != "" {
			a := model.Attachment{Name: p.Filename, MimeType: p.MimeType, Size: p.Body.Size}
			a.Ref = t.Kit.Ref(call, kindAttachment, attachmentID{Message: id, ID: p.Body.AttachmentId, Name: p.Filename, MimeType: p.MimeType, Size: p.Body.Size}.String())
			out = append(out, a)
		}
		for _, c := range p.Parts {
			walk(c)
		}
	}
	walk(p)
	return out
}

// attachmentID is what an attachment's ref holds: the message's id,
// Gmail's attachment id, and the part's name, type and size, signed, so
// that get_attachment needs no second request to know them.
type attachmentID struct {
	Message, ID, Name, MimeType string
	Size                        int64
}

func (a attachmentID) String() string {
	return strings.Join([]string{a.Message, a.ID, strconv.FormatInt(a.Size, 10), a.MimeType, a.Name}, "\n")
}

func parseAttachmentID(s string) (attachmentID, bool) {
	f := strings.SplitN(s, "\n", 5)
	if len(f) != 5 {
		return attachmentID{}, false
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	return attachmentID{Message: f[0], ID: f[1], Size: size, MimeType: f[3], Name: f[4]}, err == nil
}

// messageOf converts a Gmail message, got in the format full or metadata,
// to message.v1: with its text cut at maxText when full.
func (t Tools) messageOf(call *connectors.Call, m *gm.Message, maxText int) (model.Message, error) {
	if m == nil || m.Id == "" {
		return model.Message{}, saas.Mapping("google", "a Gmail message without an id")
	}
	out := model.Message{Object: t.Kit.Object(call, model.MessageV1, kindMessage, m.Id), Snippet: html.UnescapeString(m.Snippet)}
	out.URL = "https://mail.google.com/mail/u/0/#all/" + m.Id
	if m.ThreadId != "" {
		out.ThreadRef = t.Kit.Ref(call, kindThread, m.ThreadId)
	}
	p := m.Payload
	out.Subject = wordDecode(header(p, "Subject"))
	if a, err := mail.ParseAddress(header(p, "From")); err == nil {
		out.Sender = &model.Person{ID: a.Address, Name: a.Name}
	}
	for _, role := range []string{"To", "Cc", "Bcc"} {
		list, _ := mail.ParseAddressList(header(p, role))
		for _, a := range list {
			out.Recipients = append(out.Recipients, model.Recipient{Person: model.Person{ID: a.Address, Name: a.Name}, Role: strings.ToLower(role)})
		}
	}
	if d, err := mail.ParseDate(header(p, "Date")); err == nil {
		out.SentAt = d.UTC()
	}
	if m.InternalDate > 0 {
		out.ReceivedAt = time.UnixMilli(m.InternalDate).UTC()
	}
	for _, l := range m.LabelIds {
		out.Labels = append(out.Labels, strings.ToLower(l))
	}
	meta := map[string]any{"thread_id": m.ThreadId}
	if len(m.LabelIds) > 0 {
		meta["label_ids"] = m.LabelIds
	}
	if id := header(p, "Message-ID"); id != "" {
		meta["message_id"] = id
	}
	if maxText > 0 && p != nil {
		text, source := textOf(p)
		out.Text, out.TextTruncated = cut(text, maxText)
		meta["text_source"] = source
		out.Attachments = t.attachmentsOf(call, m.Id, p)
	}
	out.ProviderMetadata = meta
	return out, nil
}

// cut is s cut at max bytes on a rune's boundary, and whether it was.
func cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	s = s[:max]
	for len(s) > 0 && !utf8.ValidString(s[len(s)-min(len(s), 3):]) {
		s = s[:len(s)-1]
	}
	return s, true
}

var wordDecoder = new(mime.WordDecoder)

func wordDecode(s string) string {
	if d, err := wordDecoder.DecodeHeader(s); err == nil {
		return d
	}
	return s
}

// normalize ends lines with \n and trims trailing blanks.
func normalize(s string) string {
	return strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), " \t\n")
}

// composed is a message to write, checked.
type composed struct {
	to, cc, bcc []*mail.Address
	subject     string
	text, html  string
	inReplyTo   string // Message-ID answered, with its brackets
	references  string
	threadID    string
}

// raw is the message in RFC 5322, base64url as Gmail takes it: text/plain
// alone, or multipart/alternative with the HTML beside it.
func (c *composed) raw() string {
	var b bytes.Buffer
	h := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	h("To", addressList(c.to))
	h("Cc", addressList(c.cc))
	h("Bcc", addressList(c.bcc))
	h("Subject", mime.QEncoding.Encode("utf-8", c.subject))
	h("In-Reply-To", c.inReplyTo)
	h("References", c.references)
	h("MIME-Version", "1.0")
	if c.html == "" {
		h("Content-Type", "text/plain; charset=utf-8")
		h("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		writeQP(&b, c.text)
		return base64.URLEncoding.EncodeToString(b.Bytes())
	}
	mw := multipart.NewWriter(&b)
	h("Content-Type", "multipart/alternative; boundary="+mw.Boundary())
	b.WriteString("\r\n")
	for _, part := range []struct{ typ, body string }{{"text/plain", c.text}, {"text/html", c.html}} {
		if part.body == "" {
			continue
		}
		w, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {part.typ + "; charset=utf-8"}, "Content-Transfer-Encoding": {"quoted-printable"}})
		writeQP(w, part.body)
	}
	mw.Close()
	return base64.URLEncoding.EncodeToString(b.Bytes())
}

func writeQP(w interface{ Write([]byte) (int, error) }, s string) {
	qp := quotedprintable.NewWriter(w)
	qp.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")))
	qp.Close()
}

func addressList(list []*mail.Address) string {
	s := make([]string, len(list))
	for i, a := range list {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// model is the message.v1 of c, as written; ids are the caller's.
func (c *composed) model() model.Message {
	out := model.Message{Subject: c.subject, Text: c.text}
	if out.Text == "" {
		out.Text = htmltext.Text(c.html)
	}
	for _, g := range []struct {
		role string
		list []*mail.Address
	}{{"to", c.to}, {"cc", c.cc}, {"bcc", c.bcc}} {
		for _, a := range g.list {
			out.Recipients = append(out.Recipients, model.Recipient{Person: model.Person{ID: a.Address, Name: a.Name}, Role: g.role})
		}
	}
	return out
}
