package email

import (
	"context"
	"net/mail"
	"strings"

	"github.com/emersion/go-imap/v2"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/email/mailbox"
	"github.com/legate-mcp/legate/connectors/saas"
)

type replyIn struct {
	Message     string     `json:"message" jsonschema:"ref of the message to answer, from search or read"`
	Text        string     `json:"text,omitempty" jsonschema:"the body, plain text"`
	HTML        string     `json:"html,omitempty" jsonschema:"the body as HTML: with text, both are sent; alone, the plain-text part is made from it"`
	Attachments []attachIn `json:"attachments,omitempty" jsonschema:"files to attach, their content in base64"`
	ReplyAll    bool       `json:"reply_all,omitempty" jsonschema:"also answer the original's other recipients (its To and Cc, but this account), in cc"`
	Cc          []string   `json:"cc,omitempty" jsonschema:"more recipients in cc"`
	Bcc         []string   `json:"bcc,omitempty"`
	Draft       bool       `json:"draft,omitempty" jsonschema:"save the reply in the drafts folder instead of sending it"`
}

// replyTo answers a message: the recipients and subject come from it,
// then it is sent (or saved) as send (or draft) does.
func (c *Connector) replyTo(ctx context.Context, call *connectors.Call, in *replyIn) (*legate.Result, error) {
	id, err := c.imapKit.Resolve(call, kindMessage, in.Message)
	if err != nil {
		return nil, err
	}
	folder, validity, uid, ok := mailbox.ParseID(id)
	if !ok {
		return nil, saas.Mapping("email", "message ref holds %q", id)
	}
	var env *imap.Envelope
	err = c.imap.withIMAP(ctx, call, func(ctx context.Context, s *session) error {
		sel, err := examine(ctx, s, folder)
		if err != nil {
			return err
		}
		if sel.UIDValidity != validity {
			return legate.Errorf(legate.CodeNotFound, "email: message: the message is gone: folder %q was rebuilt since it was found; search again", folder)
		}
		bufs, err := s.c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Envelope: true}).Collect()
		if err != nil {
			return mapIMAP(ctx, err, "fetch")
		}
		if len(bufs) == 0 || bufs[0].Envelope == nil {
			return legate.Errorf(legate.CodeNotFound, "email: message: the message is gone from folder %q (deleted or moved)", folder)
		}
		env = bufs[0].Envelope
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &composeIn{Subject: replySubject(env.Subject), Text: in.Text, HTML: in.HTML, Attachments: in.Attachments, InReplyTo: in.Message, Bcc: in.Bcc}
	to := env.ReplyTo
	if len(to) == 0 {
		to = env.From
	}
	seen := map[string]bool{strings.ToLower(c.who.from(call).Address): true}
	add := func(list *[]string, addrs []imap.Address) {
		for _, a := range addrs {
			if a.IsGroupStart() || a.IsGroupEnd() || a.Addr() == "" || seen[strings.ToLower(a.Addr())] {
				continue
			}
			seen[strings.ToLower(a.Addr())] = true
			*list = append(*list, (&mail.Address{Name: a.Name, Address: a.Addr()}).String())
		}
	}
	add(&out.To, to)
	if len(out.To) == 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: message: it has no Reply-To or From to answer but this account")
	}
	if in.ReplyAll {
		add(&out.Cc, env.To)
		add(&out.Cc, env.Cc)
	}
	out.Cc = append(out.Cc, in.Cc...)
	if in.Draft {
		return c.draft(ctx, call, out)
	}
	return c.send(ctx, call, out)
}

// replySubject is subject with one "Re: " before it.
func replySubject(subject string) string {
	s := strings.TrimSpace(subject)
	if len(s) >= 3 && strings.EqualFold(s[:3], "re:") {
		return s
	}
	return "Re: " + s
}
