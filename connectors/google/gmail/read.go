package gmail

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"
	gm "google.golang.org/api/gmail/v1"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// me is the user id of the token's own account.
const me = "me"

// searchConcurrency bounds the requests a search sends at once.
const searchConcurrency = 4

// metadataHeaders are the headers a search result carries.
var metadataHeaders = []string{"From", "To", "Cc", "Subject", "Date", "Message-ID"}

type searchIn struct {
	saas.Page
	Q                string `json:"q,omitempty" jsonschema:"Gmail's search query, as typed in Gmail's search box: from:ana@example.com subject:invoice is:unread newer_than:7d; empty for every message"`
	IncludeSpamTrash bool   `json:"include_spam_trash,omitempty" jsonschema:"search Spam and Trash too"`
}

type messageArg struct {
	Message   string `json:"message,omitempty" jsonschema:"ref of the message, from gmail_search_messages or another gmail tool; or give message_id"`
	MessageID string `json:"message_id,omitempty" jsonschema:"Gmail's id of the message (in a Gmail URL), instead of message"`
}

type getMessageIn struct {
	messageArg
}

type getThreadIn struct {
	Thread   string `json:"thread,omitempty" jsonschema:"ref of the thread: a message's thread_ref; or give thread_id"`
	ThreadID string `json:"thread_id,omitempty" jsonschema:"Gmail's id of the thread, instead of thread"`
}

type getAttachmentIn struct {
	Attachment string `json:"attachment" jsonschema:"ref of the attachment, from the attachments of gmail_get_message"`
}

type listLabelsIn struct{}

// Thread is a conversation: its messages, oldest first.
type Thread struct {
	model.Object
	Subject  string          `json:"subject,omitempty" jsonschema:"the first message's subject"`
	Messages []model.Message `json:"messages"`
}

// AttachmentContent is an attachment's content.
type AttachmentContent struct {
	Ref        string `json:"ref"`
	MessageRef string `json:"message_ref" jsonschema:"ref of the message it is attached to"`
	Name       string `json:"name"`
	MimeType   string `json:"mime_type" jsonschema:"its MIME type, as the message declares it"`
	Size       int    `json:"size" jsonschema:"its size in bytes"`
	Base64     string `json:"content_base64" jsonschema:"its bytes, base64 (standard alphabet)"`
	Text       string `json:"text,omitempty" jsonschema:"its content, when it is UTF-8 text"`
}

// Label is a Gmail label.
type Label struct {
	ID             string `json:"id" jsonschema:"the label's id: what gmail_modify_labels takes, like its name"`
	Name           string `json:"name"`
	Type           string `json:"type" jsonschema:"system (INBOX, SENT, UNREAD, STARRED, ...) or user"`
	MessagesTotal  int64  `json:"messages_total,omitempty"`
	MessagesUnread int64  `json:"messages_unread,omitempty"`
}

func (t Tools) search(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	if len(in.Q) > 2000 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: q: at most 2000 bytes")
	}
	p, err := t.Kit.Open(call, in.Page, DefaultMessages, MaxMessages)
	if err != nil {
		return nil, err
	}
	// A cursor is bound to the query it continues.
	bound := fmt.Sprintf("%t\n%s", in.IncludeSpamTrash, in.Q)
	pageToken := ""
	if p.Token != "" {
		tok, forQ, ok := strings.Cut(p.Token, "\n")
		if !ok || forQ != bound {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: cursor: it continues another search; give the same q and include_spam_trash")
		}
		pageToken = tok
	}
	var list *gm.ListMessagesResponse
	err = t.read(ctx, call, func(ctx context.Context, s *gm.Service) error {
		req := s.Users.Messages.List(me).MaxResults(int64(p.Size)).IncludeSpamTrash(in.IncludeSpamTrash)
		if in.Q != "" {
			req = req.Q(in.Q)
		}
		if pageToken != "" {
			req = req.PageToken(pageToken)
		}
		var err error
		list, err = req.Context(ctx).Do()
		return t.mapErr(ctx, err)
	})
	if err != nil {
		return nil, err
	}
	// Gmail lists ids alone: each message's headers are a request of
	// their own, a few at a time, each retried on its own.
	got := make([]*model.Message, len(list.Messages))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(searchConcurrency)
	for i, m := range list.Messages {
		if m == nil || m.Id == "" {
			return nil, saas.Mapping("google", "a listed Gmail message without an id")
		}
		g.Go(func() error {
			var full *gm.Message
			err := t.read(gctx, call, func(ctx context.Context, s *gm.Service) error {
				var err error
				full, err = s.Users.Messages.Get(me, m.Id).Format("metadata").MetadataHeaders(metadataHeaders...).Context(ctx).Do()
				return t.mapErr(ctx, err)
			})
			if legate.CodeOf(err) == legate.CodeNotFound {
				return nil // deleted since it was listed
			}
			if err != nil {
				return err
			}
			msg, err := t.messageOf(call, full, 0)
			got[i] = &msg
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	items := make([]model.Message, 0, len(got))
	for _, m := range got {
		if m != nil {
			items = append(items, *m)
		}
	}
	next := ""
	if list.NextPageToken != "" {
		next = list.NextPageToken + "\n" + bound
	}
	out := saas.ListOf(t.Kit, call, items, next)
	var b strings.Builder
	fmt.Fprintf(&b, "%d message(s)", len(out.Items))
	for _, m := range out.Items {
		b.WriteString("\n" + messageLine(m))
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// messageLine is a message in one line.
func messageLine(m model.Message) string {
	from := ""
	if m.Sender != nil {
		from = m.Sender.ID
	}
	when := ""
	if !m.SentAt.IsZero() {
		when = m.SentAt.Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("%s  %s  %q  %s  [%s] ref %s", when, from, m.Subject, m.Snippet, strings.Join(m.Labels, ","), m.Ref)
}

// messageText is a message in a few lines: headers, then its text.
func messageText(m model.Message) string {
	var b strings.Builder
	if m.Sender != nil {
		fmt.Fprintf(&b, "From: %s\n", m.Sender.ID)
	}
	for _, r := range m.Recipients {
		fmt.Fprintf(&b, "%s: %s\n", r.Role, r.ID)
	}
	fmt.Fprintf(&b, "Subject: %s\n", m.Subject)
	if !m.SentAt.IsZero() {
		fmt.Fprintf(&b, "Date: %s\n", m.SentAt.Format("2006-01-02 15:04 MST"))
	}
	if len(m.Labels) > 0 {
		fmt.Fprintf(&b, "Labels: %s\n", strings.Join(m.Labels, ", "))
	}
	for _, a := range m.Attachments {
		fmt.Fprintf(&b, "Attachment: %s (%s, %d bytes)\n", a.Name, a.MimeType, a.Size)
	}
	b.WriteString("\n" + m.Text)
	if m.TextTruncated {
		b.WriteString("\n[text cut]")
	}
	return b.String()
}

func (t Tools) getMessage(ctx context.Context, call *connectors.Call, in *getMessageIn) (*legate.Result, error) {
	id, err := t.objectID(call, kindMessage, in.Message, in.MessageID, "message", "message_id")
	if err != nil {
		return nil, err
	}
	var out model.Message
	err = t.read(ctx, call, func(ctx context.Context, s *gm.Service) error {
		m, err := s.Users.Messages.Get(me, id).Format("full").Context(ctx).Do()
		if err != nil {
			return t.about(ctx, err, "message "+id)
		}
		out, err = t.messageOf(call, m, MaxTextBytes)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := &legate.Result{Structured: out, Text: messageText(out)}
	if out.Sender != nil {
		res.Meta = provenance.Author(out.Sender.ID) // its From
	}
	return res, nil
}

func (t Tools) getThread(ctx context.Context, call *connectors.Call, in *getThreadIn) (*legate.Result, error) {
	id, err := t.objectID(call, kindThread, in.Thread, in.ThreadID, "thread", "thread_id")
	if err != nil {
		return nil, err
	}
	var out Thread
	err = t.read(ctx, call, func(ctx context.Context, s *gm.Service) error {
		th, err := s.Users.Threads.Get(me, id).Format("full").Context(ctx).Do()
		if err != nil {
			return t.about(ctx, err, "thread "+id)
		}
		out = Thread{Object: t.Kit.Object(call, "thread", kindThread, id)}
		out.URL = "https://mail.google.com/mail/u/0/#all/" + id
		out.Messages, err = saas.Convert(th.Messages, func(m *gm.Message) (model.Message, error) { return t.messageOf(call, m, MaxThreadTextBytes) })
		if len(out.Messages) > 0 {
			out.Subject = out.Messages[0].Subject
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "thread %q: %d message(s)", out.Subject, len(out.Messages))
	for _, m := range out.Messages {
		b.WriteString("\n\n---\n" + messageText(m))
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (t Tools) getAttachment(ctx context.Context, call *connectors.Call, in *getAttachmentIn) (*legate.Result, error) {
	raw, err := t.Kit.Resolve(call, kindAttachment, in.Attachment)
	if err != nil {
		return nil, err
	}
	a, ok := parseAttachmentID(raw)
	if !ok {
		return nil, legate.Errorf(legate.CodeNotFound, "google: attachment: not an attachment ref of this connector")
	}
	if a.Size > MaxAttachmentBytes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: attachment %q has %d bytes, more than the %d this tool returns; open the message in Gmail to get it", a.Name, a.Size, MaxAttachmentBytes)
	}
	var data []byte
	err = t.read(ctx, call, func(ctx context.Context, s *gm.Service) error {
		body, err := s.Users.Messages.Attachments.Get(me, a.Message, a.ID).Context(ctx).Do()
		if err != nil {
			return t.about(ctx, err, fmt.Sprintf("attachment %q of message %s", a.Name, a.Message))
		}
		data, err = decodeData(body.Data)
		if err != nil {
			return saas.Mapping("google", "an attachment's data is not base64url")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(data) > MaxAttachmentBytes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: attachment %q has %d bytes, more than the %d this tool returns", a.Name, len(data), MaxAttachmentBytes)
	}
	out := AttachmentContent{Ref: in.Attachment, MessageRef: t.Kit.Ref(call, kindMessage, a.Message), Name: a.Name, MimeType: a.MimeType,
		Size: len(data), Base64: base64.StdEncoding.EncodeToString(data)}
	text := fmt.Sprintf("attachment %s (%s, %d bytes)", a.Name, a.MimeType, len(data))
	if isText(a.MimeType) && utf8.Valid(data) {
		out.Text = string(data)
		text += "\n\n" + out.Text
	}
	return &legate.Result{Structured: out, Text: text}, nil
}

func isText(mimeType string) bool {
	m := strings.ToLower(mimeType)
	return strings.HasPrefix(m, "text/") || strings.HasSuffix(m, "/json") || strings.HasSuffix(m, "+json") ||
		strings.HasSuffix(m, "/xml") || strings.HasSuffix(m, "+xml") || m == "application/yaml" || m == "application/x-yaml"
}

func (t Tools) listLabels(ctx context.Context, call *connectors.Call, _ *listLabelsIn) (*legate.Result, error) {
	labels, err := t.labels(ctx, call)
	if err != nil {
		return nil, err
	}
	out := saas.ListOf(t.Kit, call, labels, "")
	var b strings.Builder
	fmt.Fprintf(&b, "%d label(s)", len(labels))
	for _, l := range labels {
		fmt.Fprintf(&b, "\n%s (%s, id %s)", l.Name, l.Type, l.ID)
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// labels lists the mailbox's labels.
func (t Tools) labels(ctx context.Context, call *connectors.Call) ([]Label, error) {
	var out []Label
	err := t.read(ctx, call, func(ctx context.Context, s *gm.Service) error {
		list, err := s.Users.Labels.List(me).Context(ctx).Do()
		if err != nil {
			return t.mapErr(ctx, err)
		}
		out = make([]Label, 0, len(list.Labels))
		for _, l := range list.Labels {
			if l == nil || l.Id == "" {
				return saas.Mapping("google", "a Gmail label without an id")
			}
			out = append(out, Label{ID: l.Id, Name: l.Name, Type: l.Type, MessagesTotal: l.MessagesTotal, MessagesUnread: l.MessagesUnread})
		}
		return nil
	})
	return out, err
}
