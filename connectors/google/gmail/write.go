package gmail

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	gm "google.golang.org/api/gmail/v1"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/htmltext"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

type composeIn struct {
	To      []string `json:"to,omitempty" jsonschema:"addresses: ana@example.com or Ana <ana@example.com>"`
	Cc      []string `json:"cc,omitempty"`
	Bcc     []string `json:"bcc,omitempty"`
	Subject string   `json:"subject,omitempty"`
	Text    string   `json:"text,omitempty" jsonschema:"the body, plain text"`
	HTML    string   `json:"html,omitempty" jsonschema:"the body as HTML too, shown by mail clients that can; text is the alternative for those that cannot"`
}

type draftIn struct {
	composeIn
	ReplyTo string `json:"reply_to,omitempty" jsonschema:"ref of a message the draft answers: it goes in that message's thread with In-Reply-To and References set; to and subject default to the sender and Re: its subject"`
}

type sendIn struct {
	composeIn
}

type replyIn struct {
	messageArg
	Text     string   `json:"text,omitempty" jsonschema:"the reply, plain text"`
	HTML     string   `json:"html,omitempty" jsonschema:"the reply as HTML too"`
	ReplyAll bool     `json:"reply_all,omitempty" jsonschema:"reply to every recipient of the message too, the account itself left out"`
	Cc       []string `json:"cc,omitempty" jsonschema:"more addresses to copy"`
	Bcc      []string `json:"bcc,omitempty"`
}

type modifyLabelsIn struct {
	messageArg
	Add    []string `json:"add,omitempty" jsonschema:"labels to add, by id or name: STARRED, IMPORTANT, a user label's name"`
	Remove []string `json:"remove,omitempty" jsonschema:"labels to remove, by id or name: INBOX (archive), UNREAD (mark read)"`
}

func addresses(field string, list []string) ([]*mail.Address, error) {
	out := make([]*mail.Address, 0, len(list))
	for i, s := range list {
		a, err := mail.ParseAddress(s)
		if err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: %s[%d]: not an e-mail address: %q", field, i, s)
		}
		out = append(out, a)
	}
	return out, nil
}

// check makes in a message to write; needTo says a recipient is required.
func (in *composeIn) check(needTo bool) (*composed, error) {
	c := &composed{subject: strings.TrimSpace(in.Subject), text: in.Text, html: in.HTML}
	var err error
	if c.to, err = addresses("to", in.To); err != nil {
		return nil, err
	}
	if c.cc, err = addresses("cc", in.Cc); err != nil {
		return nil, err
	}
	if c.bcc, err = addresses("bcc", in.Bcc); err != nil {
		return nil, err
	}
	switch n := len(c.to) + len(c.cc) + len(c.bcc); {
	case needTo && n == 0:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: to: give at least one recipient (to, cc or bcc)")
	case n > maxRecipients:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: at most %d recipients, got %d", maxRecipients, n)
	case strings.ContainsAny(c.subject, "\r\n"):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: subject: one line")
	case len(c.subject) > 900:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: subject: at most 900 bytes")
	case len(c.text)+len(c.html) > MaxBodyBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: text and html: at most %d bytes together", MaxBodyBytes)
	case strings.TrimSpace(c.text) == "" && strings.TrimSpace(c.html) == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: text: the message is empty; give text (or html)")
	}
	if strings.TrimSpace(c.text) == "" {
		c.text = htmltext.Text(c.html) // the alternative for clients that show no HTML
	}
	return c, nil
}

// original is what a reply needs of the message it answers.
type original struct {
	threadID, messageID, references, subject string
	replyTo                                  []*mail.Address // Reply-To, else From
	others                                   []*mail.Address // To and Cc
}

// answering reads message id's headers for a reply.
func (t Tools) answering(ctx context.Context, call *connectors.Call, id string) (*original, error) {
	var o original
	err := t.read(ctx, call, func(ctx context.Context, s *gm.Service) error {
		m, err := s.Users.Messages.Get(me, id).Format("metadata").MetadataHeaders("Message-ID", "References", "Subject", "From", "Reply-To", "To", "Cc").Context(ctx).Do()
		if err != nil {
			return t.about(ctx, err, "message "+id)
		}
		p := m.Payload
		o = original{threadID: m.ThreadId, messageID: header(p, "Message-ID"), references: header(p, "References"), subject: wordDecode(header(p, "Subject"))}
		from := header(p, "Reply-To")
		if from == "" {
			from = header(p, "From")
		}
		o.replyTo, _ = mail.ParseAddressList(from)
		for _, h := range []string{"To", "Cc"} {
			list, _ := mail.ParseAddressList(header(p, h))
			o.others = append(o.others, list...)
		}
		return nil
	})
	return &o, err
}

// answer makes c a reply to o: thread, headers, subject.
func (c *composed) answer(o *original) {
	c.threadID = o.threadID
	if o.messageID != "" {
		c.inReplyTo = o.messageID
		c.references = strings.TrimSpace(o.references + " " + o.messageID)
	}
	if c.subject == "" {
		c.subject = o.subject
		if !strings.HasPrefix(strings.ToLower(c.subject), "re:") {
			c.subject = strings.TrimSpace("Re: " + c.subject)
		}
	}
}

// sentModel is the result of a message written: c as written, with the
// ids and labels Gmail gave it.
func (t Tools) sentModel(call *connectors.Call, c *composed, m *gm.Message) (*model.Message, error) {
	if m == nil || m.Id == "" {
		return nil, saas.Mapping("google", "a written Gmail message without an id")
	}
	out := c.model()
	out.Object = t.Kit.Object(call, model.MessageV1, kindMessage, m.Id)
	out.URL = "https://mail.google.com/mail/u/0/#all/" + m.Id
	if m.ThreadId != "" {
		out.ThreadRef = t.Kit.Ref(call, kindThread, m.ThreadId)
	}
	for _, l := range m.LabelIds {
		out.Labels = append(out.Labels, strings.ToLower(l))
	}
	out.ProviderMetadata = map[string]any{"thread_id": m.ThreadId, "label_ids": m.LabelIds}
	return &out, nil
}

// matches says that m, read in the format full, is c as written since.
func matches(c *composed, m *gm.Message, since time.Time) bool {
	if m == nil || m.Payload == nil || m.InternalDate < since.UnixMilli() || c.threadID != "" && m.ThreadId != c.threadID {
		return false
	}
	p := m.Payload
	if wordDecode(header(p, "Subject")) != c.subject {
		return false
	}
	for _, g := range []struct {
		name string
		list []*mail.Address
	}{{"To", c.to}, {"Cc", c.cc}} {
		got, _ := mail.ParseAddressList(header(p, g.name))
		if !sameAddresses(got, g.list) {
			return false
		}
	}
	want := normalize(c.text)
	if want == "" {
		want = htmltext.Text(c.html)
	}
	text, _ := textOf(p)
	return text == want
}

func sameAddresses(a, b []*mail.Address) bool {
	set := func(l []*mail.Address) []string {
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = strings.ToLower(x.Address)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(set(a), set(b))
}

// findQuery is the search for c written since: by time and subject.
func findQuery(c *composed, since time.Time) string {
	q := fmt.Sprintf("after:%d", since.Unix())
	if s := strings.NewReplacer(`"`, " ", `\`, " ").Replace(c.subject); strings.TrimSpace(s) != "" {
		q += ` subject:"` + s + `"`
	}
	return q
}

// sendOnce sends c at most once for call: an attempt whose answer was
// lost is looked for in the Sent folder by content.
func (t Tools) sendOnce(ctx context.Context, call *connectors.Call, c *composed) (*legate.Result, error) {
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[model.Message]{
		Send: func(ctx context.Context, token, _ string) (*model.Message, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			m, err := s.Users.Messages.Send(me, &gm.Message{Raw: c.raw(), ThreadId: c.threadID}).Context(ctx).Do()
			if err != nil {
				if c.threadID != "" {
					return nil, t.about(ctx, err, "thread "+c.threadID)
				}
				return nil, t.mapErr(ctx, err)
			}
			return t.sentModel(call, c, m)
		},
		Find: func(ctx context.Context, token, _ string, since time.Time) (*model.Message, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			list, err := s.Users.Messages.List(me).Q("in:sent " + findQuery(c, since)).MaxResults(maxFind).Context(ctx).Do()
			if err != nil {
				return nil, t.mapErr(ctx, err)
			}
			for _, ref := range list.Messages {
				m, err := s.Users.Messages.Get(me, ref.Id).Format("full").Context(ctx).Do()
				if err != nil {
					return nil, t.mapErr(ctx, err)
				}
				if matches(c, m, since) {
					return t.sentModel(call, c, m)
				}
			}
			return nil, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "sent " + messageLine(*out)}, nil
}

func (t Tools) send(ctx context.Context, call *connectors.Call, in *sendIn) (*legate.Result, error) {
	c, err := in.check(true)
	if err != nil {
		return nil, err
	}
	return t.sendOnce(ctx, call, c)
}

func (t Tools) reply(ctx context.Context, call *connectors.Call, in *replyIn) (*legate.Result, error) {
	id, err := t.objectID(call, kindMessage, in.Message, in.MessageID, "message", "message_id")
	if err != nil {
		return nil, err
	}
	c, err := (&composeIn{Cc: in.Cc, Bcc: in.Bcc, Text: in.Text, HTML: in.HTML}).check(false)
	if err != nil {
		return nil, err
	}
	o, err := t.answering(ctx, call, id)
	if err != nil {
		return nil, err
	}
	c.to = o.replyTo
	if in.ReplyAll {
		self, err := t.self(ctx, call)
		if err != nil {
			return nil, err
		}
		for _, a := range o.others {
			if !strings.EqualFold(a.Address, self) && !slices.ContainsFunc(append(c.to, c.cc...), func(b *mail.Address) bool { return strings.EqualFold(a.Address, b.Address) }) {
				c.cc = append(c.cc, a)
			}
		}
	}
	if len(c.to) == 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: message %s has no sender address to reply to; send a new message instead", id)
	}
	c.answer(o)
	return t.sendOnce(ctx, call, c)
}

// self is the token's own address.
func (t Tools) self(ctx context.Context, call *connectors.Call) (string, error) {
	var addr string
	err := t.read(ctx, call, func(ctx context.Context, s *gm.Service) error {
		p, err := s.Users.GetProfile(me).Context(ctx).Do()
		if err != nil {
			return t.mapErr(ctx, err)
		}
		addr = p.EmailAddress
		return nil
	})
	return addr, err
}

func (t Tools) createDraft(ctx context.Context, call *connectors.Call, in *draftIn) (*legate.Result, error) {
	c, err := in.check(false)
	if err != nil {
		return nil, err
	}
	if in.ReplyTo != "" {
		id, err := t.Kit.Resolve(call, kindMessage, in.ReplyTo)
		if err != nil {
			return nil, err
		}
		o, err := t.answering(ctx, call, id)
		if err != nil {
			return nil, err
		}
		if len(c.to)+len(c.cc)+len(c.bcc) == 0 {
			c.to = o.replyTo
		}
		c.answer(o)
	}
	drafted := func(d *gm.Draft) (*model.Message, error) {
		if d == nil || d.Id == "" || d.Message == nil {
			return nil, saas.Mapping("google", "a Gmail draft without an id or a message")
		}
		out, err := t.sentModel(call, c, d.Message)
		if err == nil {
			out.ProviderMetadata["draft_id"] = d.Id
			out.ProviderMetadata["draft_ref"] = t.Kit.Ref(call, kindDraft, d.Id)
		}
		return out, err
	}
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[model.Message]{
		Send: func(ctx context.Context, token, _ string) (*model.Message, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			d, err := s.Users.Drafts.Create(me, &gm.Draft{Message: &gm.Message{Raw: c.raw(), ThreadId: c.threadID}}).Context(ctx).Do()
			if err != nil {
				return nil, t.mapErr(ctx, err)
			}
			return drafted(d)
		},
		Find: func(ctx context.Context, token, _ string, since time.Time) (*model.Message, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			list, err := s.Users.Drafts.List(me).Q(findQuery(c, since)).MaxResults(maxFind).Context(ctx).Do()
			if err != nil {
				return nil, t.mapErr(ctx, err)
			}
			for _, ref := range list.Drafts {
				d, err := s.Users.Drafts.Get(me, ref.Id).Format("full").Context(ctx).Do()
				if err != nil {
					return nil, t.mapErr(ctx, err)
				}
				if d.Message != nil && matches(c, d.Message, since) {
					return drafted(d)
				}
			}
			return nil, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "draft saved: " + messageLine(*out)}, nil
}

// labelIDs resolves labels given by id or name to ids: Gmail's system
// ids as they are, names through the mailbox's list.
func (t Tools) labelIDs(ctx context.Context, call *connectors.Call, add, remove []string) ([]string, []string, error) {
	var all []Label
	resolve := func(field string, names []string) ([]string, error) {
		out := make([]string, 0, len(names))
		for _, n := range names {
			if n == "" || len(n) > 225 {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "google: %s: a label's id or name, got %q", field, n)
			}
			if all == nil {
				var err error
				if all, err = t.labels(ctx, call); err != nil {
					return nil, err
				}
			}
			i := slices.IndexFunc(all, func(l Label) bool { return l.ID == n })
			if i < 0 {
				i = slices.IndexFunc(all, func(l Label) bool { return strings.EqualFold(l.Name, n) })
			}
			if i < 0 {
				return nil, legate.Errorf(legate.CodeNotFound, "google: %s: the mailbox has no label %q; gmail_list_labels lists them", field, n)
			}
			out = append(out, all[i].ID)
		}
		return out, nil
	}
	a, err := resolve("add", add)
	if err != nil {
		return nil, nil, err
	}
	r, err := resolve("remove", remove)
	return a, r, err
}

func (t Tools) modifyLabels(ctx context.Context, call *connectors.Call, in *modifyLabelsIn) (*legate.Result, error) {
	id, err := t.objectID(call, kindMessage, in.Message, in.MessageID, "message", "message_id")
	if err != nil {
		return nil, err
	}
	if len(in.Add)+len(in.Remove) == 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: give labels to add or remove")
	}
	add, remove, err := t.labelIDs(ctx, call, in.Add, in.Remove)
	if err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[model.Message]{
		Send: func(ctx context.Context, token, _ string) (*model.Message, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			m, err := s.Users.Messages.Modify(me, id, &gm.ModifyMessageRequest{AddLabelIds: add, RemoveLabelIds: remove}).Context(ctx).Do()
			if err != nil {
				return nil, t.about(ctx, err, "message "+id)
			}
			msg, err := t.messageOf(call, m, 0)
			return &msg, err
		},
		// The labels are a state: read back, they say whether an
		// attempt whose answer was lost set them.
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*model.Message, error) {
			s, err := t.service(ctx, token)
			if err != nil {
				return nil, err
			}
			m, err := s.Users.Messages.Get(me, id).Format("minimal").Context(ctx).Do()
			if err != nil {
				return nil, t.about(ctx, err, "message "+id)
			}
			for _, l := range add {
				if !slices.Contains(m.LabelIds, l) {
					return nil, nil
				}
			}
			for _, l := range remove {
				if slices.Contains(m.LabelIds, l) {
					return nil, nil
				}
			}
			msg, err := t.messageOf(call, m, 0)
			return &msg, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("message %s labels: %s", id, strings.Join(out.Labels, ", "))}, nil
}
