package email

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	gomail "github.com/wneessen/go-mail"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/email/mailbox"
	"github.com/legate-mcp/legate/connectors/htmltext"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// check validates a message to compose, every problem named.
func (in *composeIn) check(maxFiles int) error {
	n := len(in.To) + len(in.Cc) + len(in.Bcc)
	if err := in.decodeFiles(maxFiles); err != nil {
		return err
	}
	switch {
	case len(in.HTML) > MaxTextBytes:
		return legate.Errorf(legate.CodeInvalidArgument, "email: html: at most %d bytes, got %d", MaxTextBytes, len(in.HTML))
	case len(in.To) == 0:
		return legate.Errorf(legate.CodeInvalidArgument, "email: to: at least one recipient is needed")
	case n > MaxRecipients:
		return legate.Errorf(legate.CodeInvalidArgument, "email: at most %d recipients in to, cc and bcc together, got %d", MaxRecipients, n)
	case len(in.Text) > MaxTextBytes:
		return legate.Errorf(legate.CodeInvalidArgument, "email: text: at most %d bytes, got %d", MaxTextBytes, len(in.Text))
	case strings.ContainsAny(in.Subject, "\r\n"):
		return legate.Errorf(legate.CodeInvalidArgument, "email: subject: must be one line")
	case len(in.Subject) > 900:
		return legate.Errorf(legate.CodeInvalidArgument, "email: subject: at most 900 bytes, got %d", len(in.Subject))
	}
	for _, f := range []struct {
		name  string
		addrs []string
	}{{"to", in.To}, {"cc", in.Cc}, {"bcc", in.Bcc}} {
		for _, a := range f.addrs {
			if _, err := mail.ParseAddress(a); err != nil || strings.ContainsAny(a, "\r\n") {
				return legate.Errorf(legate.CodeInvalidArgument, "email: %s: %q is not an email address", f.name, a)
			}
		}
	}
	return nil
}

// decodeFiles decodes the attachments, at most max bytes together.
func (in *composeIn) decodeFiles(max int) error {
	total := 0
	in.files = nil
	for i, a := range in.Attachments {
		if a.Name == "" || strings.ContainsAny(a.Name, "\r\n/\\") || len(a.Name) > 255 {
			return legate.Errorf(legate.CodeInvalidArgument, "email: attachments[%d].name: a file name without / or line breaks is needed, got %q", i, a.Name)
		}
		if a.MimeType != "" {
			if _, _, err := mime.ParseMediaType(a.MimeType); err != nil || !strings.Contains(a.MimeType, "/") {
				return legate.Errorf(legate.CodeInvalidArgument, "email: attachments[%d].mime_type: %q is not a media type", i, a.MimeType)
			}
		}
		b, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return legate.Errorf(legate.CodeInvalidArgument, "email: attachments[%d].content_base64: not base64: %v", i, err)
		}
		if total += len(b); total > max {
			return legate.Errorf(legate.CodeInvalidArgument, "email: attachments: at most %d bytes together (max_attachment_bytes), got %d and more", max, total)
		}
		in.files = append(in.files, b)
	}
	return nil
}

// messageID is the Message-ID (without brackets) of the write whose
// marker is marker: the same for every retry of one call, so that a retry
// finds what an earlier attempt wrote. With markers off it is a digest of
// the marker, like any mail client's random id; on, the marker itself.
func (c *Connector) messageID(call *connectors.Call, marker string) string {
	domain := "legate.invalid"
	if at := strings.LastIndexByte(c.who.from(call).Address, '@'); at >= 0 {
		domain = c.who.from(call).Address[at+1:]
	}
	if c.cfg.Markers {
		return marker + "@" + domain
	}
	sum := sha256.Sum256([]byte("message-id\x00" + marker))
	return hex.EncodeToString(sum[:16]) + "@" + domain
}

// compose builds the message with Message-ID id, answering r when set.
func (c *Connector) compose(call *connectors.Call, in *composeIn, id string, r *reply) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	from := c.who.from(call)
	err := m.FromFormat(from.Name, from.Address)
	if err == nil {
		err = m.To(in.To...)
	}
	if err == nil && len(in.Cc) > 0 {
		err = m.Cc(in.Cc...)
	}
	if err == nil && len(in.Bcc) > 0 {
		err = m.Bcc(in.Bcc...)
	}
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: %v", err)
	}
	m.Subject(in.Subject)
	m.SetMessageIDWithValue(id)
	if r != nil {
		m.SetGenHeader(gomail.HeaderInReplyTo, r.messageID)
		m.SetGenHeader(gomail.HeaderReferences, strings.TrimSpace(r.references+" "+r.messageID))
	}
	m.SetDate()
	switch {
	case in.HTML != "":
		m.SetBodyString(gomail.TypeTextPlain, in.text())
		m.AddAlternativeString(gomail.TypeTextHTML, in.HTML)
	default:
		m.SetBodyString(gomail.TypeTextPlain, in.Text)
	}
	for i, a := range in.Attachments {
		t := gomail.ContentType(cmp.Or(a.MimeType, "application/octet-stream"))
		if err := m.AttachReader(a.Name, bytes.NewReader(in.files[i]), gomail.WithFileContentType(t)); err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "email: attachments[%d]: %v", i, err)
		}
	}
	return m, nil
}

// text is the plain text of the message: text, else the HTML's text.
func (in *composeIn) text() string {
	if in.Text != "" || in.HTML == "" {
		return in.Text
	}
	return htmltext.Text(in.HTML)
}

// composed is the message.v1 of a message this connector wrote.
func (c *Connector) composed(call *connectors.Call, in *composeIn, m *model.Message, id string) {
	m.Subject, m.Text, m.ThreadRef = in.Subject, in.text(), in.InReplyTo
	m.Attachments = nil
	for i, a := range in.Attachments {
		m.Attachments = append(m.Attachments, model.Attachment{Name: a.Name, MimeType: cmp.Or(a.MimeType, "application/octet-stream"), Size: int64(len(in.files[i]))})
	}
	from := c.who.from(call)
	m.Sender = &model.Person{ID: from.Address, Name: from.Name}
	for _, r := range []struct {
		role  string
		addrs []string
	}{{"to", in.To}, {"cc", in.Cc}, {"bcc", in.Bcc}} {
		for _, a := range r.addrs {
			if pa, err := mail.ParseAddress(a); err == nil {
				m.Recipients = append(m.Recipients, model.Recipient{Person: model.Person{ID: pa.Address, Name: pa.Name}, Role: r.role})
			}
		}
	}
	if m.ProviderMetadata == nil {
		m.ProviderMetadata = map[string]any{}
	}
	m.ProviderMetadata["message_id"] = "<" + id + ">"
}

func (c *Connector) draft(ctx context.Context, call *connectors.Call, in *composeIn) (*legate.Result, error) {
	if err := in.check(c.cfg.MaxAttachmentBytes); err != nil {
		return nil, err
	}
	folder := c.cfg.DraftsFolder
	out, err := saas.WriteOnce(ctx, c.imapKit, call, saas.Write[model.Message]{
		Send: func(ctx context.Context, password, marker string) (*model.Message, error) {
			var out *model.Message
			err := c.imap.session(ctx, call, password, func(ctx context.Context, s *session) error {
				var err error
				out, err = c.saveDraft(ctx, call, s, in, c.messageID(call, marker))
				return err
			})
			return out, err
		},
		Find: func(ctx context.Context, password, marker string, _ time.Time) (*model.Message, error) {
			var out *model.Message
			err := c.imap.session(ctx, call, password, func(ctx context.Context, s *session) error {
				var err error
				out, err = c.findDraft(ctx, call, s, folder, c.messageID(call, marker))
				return err
			})
			return out, err
		},
	})
	if err != nil {
		return nil, err
	}
	if out.Text == "" && in.text() != "" {
		c.composed(call, in, out, c.messageID(call, c.imapKit.Marker(call)))
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("draft saved in %s: %q to %s (%s)", folder, in.Subject, strings.Join(in.To, ", "), out.Ref)}, nil
}

// saveDraft appends the draft with Message-ID id to the drafts folder,
// unless it is there already: APPEND is not idempotent, and an attempt
// whose answer was lost may have saved it.
func (c *Connector) saveDraft(ctx context.Context, call *connectors.Call, s *session, in *composeIn, id string) (*model.Message, error) {
	folder := c.cfg.DraftsFolder
	if m, err := c.findDraft(ctx, call, s, folder, id); err != nil || m != nil {
		return m, err
	}
	r, err := c.reply(ctx, call, s, in.InReplyTo)
	if err != nil {
		return nil, err
	}
	msg, err := c.compose(call, in, id, r)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: composing the draft: %v", err)
	}
	cmd := s.c.Append(folder, int64(buf.Len()), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagDraft, imap.FlagSeen}})
	if _, err := cmd.Write(buf.Bytes()); err != nil {
		cmd.Close()
		return nil, err
	}
	if err := cmd.Close(); err != nil {
		return nil, err
	}
	data, err := cmd.Wait()
	if err != nil {
		return nil, mapIMAP(ctx, err, "saving the draft to "+strconv.Quote(folder))
	}
	// With UIDPLUS the answer names the draft's UID; without, the draft is
	// found by its Message-ID.
	var out *model.Message
	if data.UID != 0 && data.UIDValidity != 0 {
		out = &model.Message{Object: c.imapKit.Object(call, model.MessageV1, kindMessage, mailbox.ID(folder, data.UIDValidity, data.UID)),
			Labels: []string{"draft", "seen"}, ReceivedAt: time.Now().UTC()}
		out.ProviderMetadata = map[string]any{"folder": folder}
	} else if out, err = c.findDraft(ctx, call, s, folder, id); err != nil {
		return nil, err
	} else if out == nil {
		return nil, saas.Mapping("email", "the saved draft is not found in %q by its Message-ID", folder)
	}
	c.composed(call, in, out, id)
	return out, nil
}

// findDraft looks for the message with Message-ID id in folder.
func (c *Connector) findDraft(ctx context.Context, call *connectors.Call, s *session, folder, id string) (*model.Message, error) {
	sel, err := s.c.Select(folder, nil).Wait()
	if err != nil {
		return nil, mapIMAP(ctx, err, "drafts folder "+strconv.Quote(folder))
	}
	data, err := s.c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: "<" + id + ">"}}}, nil).Wait()
	if err != nil {
		return nil, mapIMAP(ctx, err, "search")
	}
	uids := data.AllUIDs()
	if len(uids) == 0 {
		return nil, nil
	}
	bufs, err := s.c.Fetch(imap.UIDSetNum(uids[0]), summaryOptions).Collect()
	if err != nil || len(bufs) == 0 {
		return nil, mapIMAP(ctx, err, "fetch")
	}
	m := c.messageOf(call, folder, sel.UIDValidity, bufs[0])
	return &m, nil
}

func (c *Connector) send(ctx context.Context, call *connectors.Call, in *composeIn) (*legate.Result, error) {
	if err := in.check(c.cfg.MaxAttachmentBytes); err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, c.smtpKit, call, saas.Write[Sent]{
		Send: func(ctx context.Context, password, marker string) (*Sent, error) {
			return c.sendOnce(ctx, call, in, password, marker)
		},
		Find: func(ctx context.Context, _, marker string, _ time.Time) (*Sent, error) {
			box := c.outbox(call)
			pending, _, err := box.state(ctx)
			if err != nil || !pending {
				return nil, err
			}
			return c.confirm(ctx, call, in, c.messageID(call, marker)), nil
		},
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("sent %q to %s: %s", in.Subject, strings.Join(in.To, ", "), out.Delivery)
	if out.Delivery == "unconfirmed" {
		text += " (an earlier attempt reached the end of the message but its answer was lost; it was not sent again)"
	}
	return &legate.Result{Structured: out, Text: text}, nil
}

// confirm is the result of a send with Message-ID id whose answer was
// lost: accepted when the sent folder holds it, else unconfirmed. It is
// never sent again either way.
func (c *Connector) confirm(ctx context.Context, call *connectors.Call, in *composeIn, id string) *Sent {
	if c.cfg.SentFolder == "" {
		return c.sent(call, in, id, "unconfirmed")
	}
	found := false
	err := c.imap.withIMAP(ctx, call, func(ctx context.Context, s *session) error {
		if _, err := examine(ctx, s, c.cfg.SentFolder); err != nil {
			return err
		}
		data, err := s.c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: "<" + id + ">"}}}, nil).Wait()
		if err != nil {
			return mapIMAP(ctx, err, "search")
		}
		found = len(data.AllUIDs()) > 0
		return nil
	})
	if err != nil || !found {
		out := c.sent(call, in, id, "unconfirmed")
		if err != nil {
			out.ProviderMetadata["sent_folder_error"] = legate.CodeOf(err)
		}
		return out
	}
	out := c.sent(call, in, id, "accepted")
	out.ProviderMetadata["confirmed_by"] = "found in " + c.cfg.SentFolder
	return out
}

// sent is the result of a send with Message-ID id.
func (c *Connector) sent(call *connectors.Call, in *composeIn, id, delivery string) *Sent {
	out := &Sent{Message: model.Message{Object: c.smtpKit.Object(call, model.MessageV1, "sent", "<"+id+">")}, Delivery: delivery}
	c.composed(call, in, &out.Message, id)
	out.SentAt = time.Now().UTC().Truncate(time.Second)
	return out
}

// reply is what a message answering another carries of it.
type reply struct {
	messageID  string // with brackets
	references string
}

// reply looks up the message ref names ("" for none) on s: its
// Message-ID and References. The selected folder changes.
func (c *Connector) reply(ctx context.Context, call *connectors.Call, s *session, ref string) (*reply, error) {
	if ref == "" {
		return nil, nil
	}
	id, err := c.imapKit.Resolve(call, kindMessage, ref)
	if err != nil {
		return nil, err
	}
	folder, validity, uid, ok := mailbox.ParseID(id)
	if !ok {
		return nil, saas.Mapping("email", "message ref holds %q", id)
	}
	sel, err := examine(ctx, s, folder)
	if err != nil {
		return nil, err
	}
	if sel.UIDValidity != validity {
		return nil, legate.Errorf(legate.CodeNotFound, "email: in_reply_to: the message is gone: folder %q was rebuilt since it was found; search again", folder)
	}
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"References"}, Peek: true}
	bufs, err := s.c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Envelope: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil, mapIMAP(ctx, err, "fetch")
	}
	if len(bufs) == 0 || bufs[0].Envelope == nil {
		return nil, legate.Errorf(legate.CodeNotFound, "email: in_reply_to: the message is gone from folder %q (deleted or moved)", folder)
	}
	if bufs[0].Envelope.MessageID == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: in_reply_to: the message has no Message-ID to answer")
	}
	r := &reply{messageID: "<" + bufs[0].Envelope.MessageID + ">"}
	if h, err := mail.ReadMessage(bytes.NewReader(append(bufs[0].FindBodySection(section), "\r\n"...))); err == nil {
		r.references = strings.Join(strings.Fields(h.Header.Get("References")), " ")
	}
	return r, nil
}
