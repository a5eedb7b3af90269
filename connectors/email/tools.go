package email

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/email/mailbox"
	"github.com/legate-mcp/legate/connectors/email/mimetext"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

const kindMessage = mailbox.KindMessage

type searchIn struct {
	saas.Page
	Folder  string `json:"folder,omitempty" jsonschema:"folder to search, INBOX when omitted"`
	From    string `json:"from,omitempty" jsonschema:"text the From header contains"`
	To      string `json:"to,omitempty" jsonschema:"text the To header contains"`
	Subject string `json:"subject,omitempty" jsonschema:"text the subject contains"`
	Text    string `json:"text,omitempty" jsonschema:"text the headers or body contain"`
	Since   string `json:"since,omitempty" jsonschema:"only messages received on or after this date (YYYY-MM-DD or RFC 3339; the server compares dates only)"`
	Before  string `json:"before,omitempty" jsonschema:"only messages received before this date (YYYY-MM-DD or RFC 3339)"`
	Unseen  bool   `json:"unseen,omitempty" jsonschema:"only messages not yet read"`
}

type readIn struct {
	Message string `json:"message" jsonschema:"ref of the message, from search or draft"`
}

// composeIn is what draft and send take.
type composeIn struct {
	To      []string `json:"to" jsonschema:"recipients, each an address optionally with a name: \"Ann <ann@example.com>\""`
	Cc      []string `json:"cc,omitempty"`
	Bcc     []string `json:"bcc,omitempty" jsonschema:"blind copies: sent to, never shown to the others"`
	Subject string   `json:"subject"`
	Text    string   `json:"text,omitempty" jsonschema:"the body, plain text"`
	HTML    string   `json:"html,omitempty" jsonschema:"the body as HTML: with text, both are sent (multipart/alternative); alone, the plain-text part is made from it"`
	// Attachments are files to attach.
	Attachments []attachIn `json:"attachments,omitempty" jsonschema:"files to attach, their content in base64"`
	InReplyTo   string     `json:"in_reply_to,omitempty" jsonschema:"ref of the message this answers, from search or read: its Message-ID goes in In-Reply-To and References, so mail clients thread the reply"`

	files [][]byte // the attachments' decoded content, by check
}

// attachIn is a file to attach.
type attachIn struct {
	Name     string `json:"name" jsonschema:"the file name the recipients see"`
	MimeType string `json:"mime_type,omitempty" jsonschema:"its type, application/octet-stream when omitted"`
	Content  string `json:"content_base64" jsonschema:"the file's bytes, base64 (standard alphabet)"`
}

// Sent is the result of send: the message as sent, and whether the
// server confirmed it.
type Sent struct {
	model.Message
	Delivery string `json:"delivery" jsonschema:"accepted: the SMTP server confirmed it (250), or its answer was lost but the message is in the sent folder; unconfirmed: an earlier attempt of this call passed the end of the message but its answer was lost, so it was not sent again — the server most likely has it"`
}

// newTools lists every tool of the type, each in its toolset.
func (c *Connector) newTools() []connectors.Tool {
	host := &mailbox.Host{Kit: c.imapKit, Read: c.imap.withClient, Login: c.imap.login, Map: mapIMAP,
		ArchiveFolder: c.cfg.ArchiveFolder, MaxAttachmentBytes: int64(c.cfg.MaxAttachmentBytes)}
	in := func(set string, tools ...connectors.Tool) []connectors.Tool {
		for i := range tools {
			tools[i].Toolset = set
		}
		return tools
	}
	extra := host.Tools()
	all := in("read", append(c.readTools(), extra[:2]...)...)
	all = append(all, in("send", c.sendTools()...)...)
	return append(all, in("organize", extra[2:]...)...)
}

func (c *Connector) readTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[saas.List[model.Message]](connectors.NewTool("search",
			fmt.Sprintf("Search the mailbox's email messages in a folder (message.v1), newest first, by from, to, subject, text and dates, a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page, with the same query). Each result has a snippet; read gives the text.", DefaultMessages, MaxMessages),
			legate.ClassRead, c.search)),
		connectors.Returning[model.Message](connectors.NewTool("read",
			fmt.Sprintf("Read one email message (message.v1) by its ref: its text (the text/plain part, else the HTML part converted to text; at most %d bytes, then text_truncated) and its attachments listed by name, type and size.", c.cfg.MaxBodyBytes),
			legate.ClassRead, c.read)),
	}
}

func (c *Connector) sendTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[model.Message](connectors.NewTool("draft",
			fmt.Sprintf("Save an email message (text and/or HTML, attachments as send takes them) as a draft in the %q folder, unsent; returns the draft (message.v1). Retrying the same call never saves it twice.", c.cfg.DraftsFolder),
			legate.ClassDraft, c.draft)),
		connectors.Returning[Sent](connectors.NewTool("send",
			fmt.Sprintf("Send an email message over SMTP from %s, plain text and/or HTML, with attachments (at most %d bytes together); returns it (message.v1) with delivery accepted, or unconfirmed when an earlier attempt's answer was lost. Retrying the same call never sends it twice.", c.cfg.From, c.cfg.MaxAttachmentBytes),
			legate.ClassWrite, c.send)),
		connectors.Returning[Sent](connectors.NewTool("reply",
			"Reply to an email message: to its Reply-To (else From), with reply_all its other recipients in cc; the subject gets \"Re:\", In-Reply-To and References thread it. Text and/or HTML, attachments as send takes them; with draft, saved in the drafts folder instead of sent. Retrying the same call never sends it twice.",
			legate.ClassWrite, c.replyTo)),
	}
}

// query is a search made ready for IMAP, with the digest a cursor carries
// so that it is only used with the same query.
func (in *searchIn) query() (*imap.SearchCriteria, string, error) {
	crit := &imap.SearchCriteria{}
	for _, h := range []struct{ key, v string }{{"From", in.From}, {"To", in.To}, {"Subject", in.Subject}} {
		if h.v != "" {
			crit.Header = append(crit.Header, imap.SearchCriteriaHeaderField{Key: h.key, Value: h.v})
		}
	}
	if in.Text != "" {
		crit.Text = []string{in.Text}
	}
	for _, d := range []struct {
		field, v string
		to       *time.Time
	}{{"since", in.Since, &crit.Since}, {"before", in.Before, &crit.Before}} {
		if d.v == "" {
			continue
		}
		t, err := parseDate(d.v)
		if err != nil {
			return nil, "", legate.Errorf(legate.CodeInvalidArgument, "email: %s: want YYYY-MM-DD or an RFC 3339 time, got %q", d.field, d.v)
		}
		*d.to = t
	}
	if in.Unseen {
		crit.NotFlag = []imap.Flag{imap.FlagSeen}
	}
	q := *in
	q.Page = saas.Page{}
	b, _ := json.Marshal(q)
	sum := sha256.Sum256(b)
	return crit, hex.EncodeToString(sum[:8]), nil
}

func parseDate(v string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, v)
}

// cursor is where the next page of a search starts: below UID Below of
// the folder with UIDValidity, for the query with digest Query.
type cursor struct {
	UIDValidity uint32
	Below       imap.UID
	Query       string
}

func (cu cursor) token() string {
	return fmt.Sprintf("v1/%d/%d/%s", cu.UIDValidity, cu.Below, cu.Query)
}

func parseCursor(token string) (cursor, bool) {
	f := strings.Split(token, "/")
	if len(f) != 4 || f[0] != "v1" {
		return cursor{}, false
	}
	v, err1 := strconv.ParseUint(f[1], 10, 32)
	b, err2 := strconv.ParseUint(f[2], 10, 32)
	return cursor{UIDValidity: uint32(v), Below: imap.UID(b), Query: f[3]}, err1 == nil && err2 == nil
}

func (c *Connector) search(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	p, err := c.imapKit.Open(call, in.Page, DefaultMessages, MaxMessages)
	if err != nil {
		return nil, err
	}
	crit, digest, err := in.query()
	if err != nil {
		return nil, err
	}
	folder := in.Folder
	if folder == "" {
		folder = "INBOX"
	}
	var from cursor
	if p.Token != "" {
		var ok bool
		if from, ok = parseCursor(p.Token); !ok || from.Query != digest {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "email: cursor: it belongs to another search; pass it with the same folder and query, or start again without it")
		}
	}
	var out saas.List[model.Message]
	err = c.imap.withIMAP(ctx, call, func(ctx context.Context, s *session) error {
		sel, err := examine(ctx, s, folder)
		if err != nil {
			return err
		}
		if p.Token != "" && from.UIDValidity != sel.UIDValidity {
			return legate.Errorf(legate.CodeConflict, "email: folder %q was rebuilt since the first page (its UIDVALIDITY changed); search again without cursor", folder)
		}
		page, next, err := searchPage(ctx, s, crit, from.Below, p.Size)
		if err != nil {
			return err
		}
		items, err := c.fetchSummaries(ctx, call, s, folder, sel.UIDValidity, page)
		if err != nil {
			return err
		}
		token := ""
		if next {
			token = cursor{UIDValidity: sel.UIDValidity, Below: page[len(page)-1], Query: digest}.token()
		}
		out = saas.ListOf(c.imapKit, call, items, token)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d message(s) in %s", len(out.Items), folder)
	for _, m := range out.Items {
		who := ""
		if m.Sender != nil {
			who = m.Sender.ID
		}
		fmt.Fprintf(&b, "\n[%s] %s: %s — %s", m.ReceivedAt.Format(time.RFC3339), who, m.Subject, m.Snippet)
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// searchPage returns the size highest UIDs matching crit below below (0:
// no bound), highest first, and whether more match.
func searchPage(ctx context.Context, s *session, crit *imap.SearchCriteria, below imap.UID, size int) ([]imap.UID, bool, error) {
	if below == 1 {
		return nil, false, nil
	}
	q := *crit
	if below > 1 {
		q.UID = append(slices.Clone(crit.UID), imap.UIDSet{imap.UIDRange{Start: 1, Stop: below - 1}})
	}
	data, err := s.c.UIDSearch(&q, nil).Wait()
	if err != nil {
		return nil, false, mapIMAP(ctx, err, "search")
	}
	uids := data.AllUIDs()
	slices.SortFunc(uids, func(a, b imap.UID) int { return int(b) - int(a) })
	if len(uids) > size {
		return uids[:size], true, nil
	}
	return uids, false, nil
}

// summaryOptions are what a search result is built from.
var summaryOptions = &imap.FetchOptions{UID: true, Envelope: true, Flags: true, InternalDate: true, RFC822Size: true,
	BodyStructure: &imap.FetchItemBodyStructure{Extended: true}}

// snippetBytes is how much of a text part a snippet is read from.
const snippetBytes = 2048

// fetchSummaries fetches the messages uids of the selected folder, in
// that order, with a snippet each: one FETCH for the envelopes and
// structures, then one per distinct text part path, pipelined.
func (c *Connector) fetchSummaries(ctx context.Context, call *connectors.Call, s *session, folder string, validity uint32, uids []imap.UID) ([]model.Message, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	bufs, err := s.c.Fetch(imap.UIDSetNum(uids...), summaryOptions).Collect()
	if err != nil {
		return nil, mapIMAP(ctx, err, "fetch")
	}
	byUID := map[imap.UID]*fetched{}
	groups := map[string][]*fetched{}
	for _, b := range bufs {
		f := &fetched{buf: b}
		byUID[b.UID] = f
		if tp, ok := mimetext.ChooseText(b.BodyStructure); ok {
			f.text, f.hasText = tp, true
			key := fmt.Sprint(tp.Path)
			groups[key] = append(groups[key], f)
		}
	}
	type pending struct {
		cmd     *imapclient.FetchCommand
		section *imap.FetchItemBodySection
		group   []*fetched
	}
	var cmds []pending
	for _, g := range groups {
		section := &imap.FetchItemBodySection{Part: g[0].text.Path, Peek: true, Partial: &imap.SectionPartial{Size: snippetBytes}}
		set := imap.UIDSet{}
		for _, f := range g {
			set.AddNum(f.buf.UID)
		}
		cmds = append(cmds, pending{cmd: s.c.Fetch(set, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}), section: section, group: g})
	}
	for _, p := range cmds {
		got, err := p.cmd.Collect()
		if err != nil {
			return nil, mapIMAP(ctx, err, "fetch")
		}
		for _, b := range got {
			if f := byUID[b.UID]; f != nil {
				f.snippet = mimetext.Snippet(mimetext.DecodeText(b.FindBodySection(p.section), f.text))
			}
		}
	}
	items := make([]model.Message, 0, len(uids))
	for _, uid := range uids {
		f := byUID[uid]
		if f == nil {
			continue // expunged meanwhile
		}
		m := c.messageOf(call, folder, validity, f.buf)
		m.Snippet = f.snippet
		items = append(items, m)
	}
	return items, nil
}

type fetched struct {
	buf     *imapclient.FetchMessageBuffer
	text    mimetext.TextPart
	hasText bool
	snippet string
}

// messageOf is the message.v1 of a fetched message, without text.
func (c *Connector) messageOf(call *connectors.Call, folder string, validity uint32, b *imapclient.FetchMessageBuffer) model.Message {
	id := mailbox.ID(folder, validity, b.UID)
	m := model.Message{Object: c.imapKit.Object(call, model.MessageV1, kindMessage, id), ReceivedAt: b.InternalDate.UTC()}
	meta := map[string]any{"folder": folder}
	if e := b.Envelope; e != nil {
		m.Subject = e.Subject
		if !e.Date.IsZero() {
			m.SentAt = e.Date.UTC()
		}
		if len(e.From) > 0 {
			m.Sender = &model.Person{ID: e.From[0].Addr(), Name: e.From[0].Name}
		}
		for _, r := range []struct {
			role  string
			addrs []imap.Address
		}{{"to", e.To}, {"cc", e.Cc}, {"bcc", e.Bcc}} {
			for _, a := range r.addrs {
				if a.IsGroupStart() || a.IsGroupEnd() {
					continue
				}
				m.Recipients = append(m.Recipients, model.Recipient{Person: model.Person{ID: a.Addr(), Name: a.Name}, Role: r.role})
			}
		}
		if e.MessageID != "" {
			meta["message_id"] = "<" + e.MessageID + ">"
		}
	}
	for _, f := range b.Flags {
		m.Labels = append(m.Labels, strings.ToLower(strings.TrimPrefix(string(f), "\\")))
	}
	slices.Sort(m.Labels)
	if b.RFC822Size > 0 {
		meta["size"] = b.RFC822Size
	}
	m.ProviderMetadata = meta
	return m
}

func (c *Connector) read(ctx context.Context, call *connectors.Call, in *readIn) (*legate.Result, error) {
	id, err := c.imapKit.Resolve(call, kindMessage, in.Message)
	if err != nil {
		return nil, err
	}
	folder, validity, uid, ok := mailbox.ParseID(id)
	if !ok {
		return nil, saas.Mapping("email", "message ref holds %q", id)
	}
	var out model.Message
	err = c.imap.withIMAP(ctx, call, func(ctx context.Context, s *session) error {
		sel, err := examine(ctx, s, folder)
		if err != nil {
			return err
		}
		if sel.UIDValidity != validity {
			return legate.Errorf(legate.CodeNotFound, "email: the message is gone: folder %q was rebuilt since it was found (UIDVALIDITY changed); search again", folder)
		}
		bufs, err := s.c.Fetch(imap.UIDSetNum(uid), summaryOptions).Collect()
		if err != nil {
			return mapIMAP(ctx, err, "fetch")
		}
		if len(bufs) == 0 {
			return legate.Errorf(legate.CodeNotFound, "email: the message is gone from folder %q (deleted or moved)", folder)
		}
		out = c.messageOf(call, folder, validity, bufs[0])
		tp, hasText := mimetext.ChooseText(bufs[0].BodyStructure)
		parts := mimetext.Attachments(bufs[0].BodyStructure, tp)
		for _, p := range parts {
			out.Attachments = append(out.Attachments, p.Attachment)
		}
		if len(parts) > 0 {
			out.ProviderMetadata["attachments"] = parts // with their parts, for attachment
		}
		source := "none"
		if hasText {
			// Enough encoded bytes for max_body_bytes of text: quoted-printable
			// can triple a text, base64 adds a third.
			want := int64(c.cfg.MaxBodyBytes)*3 + 4
			section := &imap.FetchItemBodySection{Part: tp.Path, Peek: true, Partial: &imap.SectionPartial{Size: want}}
			got, err := s.c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
			if err != nil {
				return mapIMAP(ctx, err, "fetch")
			}
			if len(got) == 0 {
				return legate.Errorf(legate.CodeNotFound, "email: the message is gone from folder %q (deleted or moved)", folder)
			}
			raw := got[0].FindBodySection(section)
			text := mimetext.DecodeText(raw, tp)
			out.Text, out.TextTruncated = mimetext.CutText(text, c.cfg.MaxBodyBytes)
			out.TextTruncated = out.TextTruncated || int64(len(raw)) >= want && int64(tp.Size) > want
			source = "text/plain"
			if tp.HTML {
				source = "text/html converted to text"
			}
		}
		out.ProviderMetadata["text_source"] = source
		return nil
	})
	if err != nil {
		return nil, err
	}
	who := cmp.Or(out.Sender, &model.Person{}).ID // its From address, also its author
	date := "unknown"
	if !out.SentAt.IsZero() {
		date = out.SentAt.Format(time.RFC1123Z)
	}
	text := fmt.Sprintf("From: %s\nSubject: %s\nDate: %s\n\n%s", who, out.Subject, date, out.Text)
	if out.TextTruncated {
		text += "\n[text cut at max_body_bytes]"
	}
	if parts, ok := out.ProviderMetadata["attachments"].([]mimetext.FilePart); ok {
		for _, a := range parts {
			text += fmt.Sprintf("\n[attachment part %s] %s (%s, %d bytes)", a.Part, a.Name, a.MimeType, a.Size)
		}
	}
	return &legate.Result{Structured: out, Text: text, Meta: provenance.Author(who)}, nil
}
