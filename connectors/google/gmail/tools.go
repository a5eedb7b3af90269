package gmail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Toolset is the name of the toolset of every tool here.
const Toolset = "gmail"

// Bounds of the tools.
const (
	// DefaultMessages and MaxMessages are search_messages' page sizes.
	DefaultMessages, MaxMessages = 10, 50
	// MaxTextBytes bounds the text of a message read alone; a thread's
	// messages get MaxThreadTextBytes each.
	MaxTextBytes       = 64 << 10
	MaxThreadTextBytes = 16 << 10
	// MaxAttachmentBytes bounds an attachment get_attachment returns.
	MaxAttachmentBytes = 1 << 20
	// MaxBodyBytes bounds the text and HTML of a message written.
	MaxBodyBytes = 1 << 20
	// maxRecipients bounds to, cc and bcc together.
	maxRecipients = 100
	// maxFind bounds the messages a reconciling write reads.
	maxFind = 20
)

// Kinds of the refs the tools hand out.
const (
	kindMessage    = "message"
	kindThread     = "thread"
	kindAttachment = "attachment"
	kindDraft      = "draft"
)

// Deps is what the tools need from the connector.
type Deps struct {
	// Kit runs every call: retries, refs, cursors, writes at most once.
	Kit *saas.Kit
	// Client returns an HTTP client that sends token, the access token the
	// kit handed the attempt (saas.Options.Exchange), to Google.
	Client func(ctx context.Context, token string) (*http.Client, error)
	// BaseURL is the Gmail API's base URL, https://gmail.googleapis.com/;
	// its paths start with gmail/v1/.
	BaseURL string
	// MapError makes an error of Google's client canonical (googleapi's
	// errors by status and reason): the connector's, gcore.MapError.
	MapError func(ctx context.Context, err error) error
}

// Tools are the tools of the gmail toolset.
type Tools struct{ Deps }

func inToolset(t connectors.Tool) connectors.Tool {
	t.Toolset = Toolset
	return t
}

// List returns the tools, each in the gmail toolset.
func (t Tools) List() []connectors.Tool {
	tools := []connectors.Tool{
		connectors.Returning[saas.List[model.Message]](connectors.NewTool("gmail_search_messages",
			fmt.Sprintf("Search the mailbox with Gmail's query syntax (from:, to:, subject:, label:, is:unread, has:attachment, after:2026/01/31, newer_than:7d, words), newest first; each result (message.v1) has its sender, recipients, subject, date, snippet, labels and thread. A page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page, with the same q).", DefaultMessages, MaxMessages),
			legate.ClassRead, t.search)),
		connectors.Returning[model.Message](connectors.NewTool("gmail_get_message",
			fmt.Sprintf("Read one message (message.v1) by its ref: headers, its text (the text/plain part, else the HTML converted to text; at most %d bytes, then text_truncated) and its attachments listed with their ref, name, type and size.", MaxTextBytes),
			legate.ClassRead, t.getMessage)),
		connectors.Returning[Thread](connectors.NewTool("gmail_get_thread",
			fmt.Sprintf("Read a conversation: every message of a thread (message.v1), oldest first, each text cut at %d bytes.", MaxThreadTextBytes),
			legate.ClassRead, t.getThread)),
		connectors.Returning[AttachmentContent](connectors.NewTool("gmail_get_attachment",
			fmt.Sprintf("Fetch an attachment by the ref gmail_get_message lists: its bytes in base64 with its name and MIME type, and its text when it is text. At most %d bytes; a larger one is refused.", MaxAttachmentBytes),
			legate.ClassRead, t.getAttachment)),
		connectors.Returning[saas.List[Label]](connectors.NewTool("gmail_list_labels",
			"List the mailbox's labels, system (INBOX, UNREAD, STARRED, ...) and the user's, with their ids.",
			legate.ClassRead, t.listLabels)),
		connectors.Returning[model.Message](connectors.NewTool("gmail_create_draft",
			"Save a message as a draft, unsent: to, cc, bcc, subject, a plain-text body and optionally an HTML one; to answer a message, give its ref as reply_to. Returns the draft (message.v1). "+saas.OnceNote,
			legate.ClassDraft, t.createDraft)),
		connectors.Returning[model.Message](connectors.NewTool("gmail_send_message",
			"Send a new message from the account: to, cc, bcc, subject, a plain-text body and optionally an HTML one. Returns the sent message (message.v1). "+saas.OnceNote,
			legate.ClassWrite, t.send)),
		connectors.Returning[model.Message](connectors.NewTool("gmail_reply",
			"Reply in a message's thread: to its sender (Reply-To if set), or with reply_all to its other recipients too; subject Re: and the In-Reply-To and References headers are set, so mail clients thread it. Returns the sent reply (message.v1). "+saas.OnceNote,
			legate.ClassWrite, t.reply)),
		connectors.Returning[model.Message](connectors.NewTool("gmail_modify_labels",
			"Add labels to a message and remove others, by label id or name (gmail_list_labels): archive by removing INBOX, mark read by removing UNREAD, star by adding STARRED. Returns the message with its labels (message.v1). "+saas.OnceNote,
			legate.ClassWrite, t.modifyLabels)),
	}
	for i := range tools {
		tools[i] = inToolset(tools[i])
	}
	return tools
}

// service returns the Gmail client of an attempt sending token.
func (t Tools) service(ctx context.Context, token string) (*gm.Service, error) {
	hc, err := t.Client(ctx, token)
	if err != nil {
		return nil, err
	}
	s, err := gm.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(t.BaseURL), option.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: gmail base URL: %v", err)
	}
	return s, nil
}

// read runs fn, one request that changes nothing, with a client.
func (t Tools) read(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, s *gm.Service) error) error {
	return t.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		s, err := t.service(ctx, token)
		if err != nil {
			return err
		}
		return fn(ctx, s)
	})
}

// mapErr makes err canonical with the connector's MapError.
func (t Tools) mapErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return t.MapError(ctx, err)
}

// about makes err canonical and, when it is NOT_FOUND, names what was not
// found: "message 18c2…".
func (t Tools) about(ctx context.Context, err error, what string) error {
	err = t.mapErr(ctx, err)
	var le *legate.Error
	if errors.As(err, &le) && le.Code == legate.CodeNotFound {
		return &legate.Error{Code: legate.CodeNotFound, Err: err,
			Message: "google: gmail: " + what + " was not found: deleted, or not in this account's mailbox; search again for its ref"}
	}
	return err
}

// objectID resolves an object given by ref or by Gmail's id.
func (t Tools) objectID(call *connectors.Call, kind, ref, id, refName, idName string) (string, error) {
	switch {
	case ref != "" && id != "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: give %s or %s, not both", refName, idName)
	case ref != "":
		return t.Kit.Resolve(call, kind, ref)
	case id == "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: give %s (a ref) or %s", refName, idName)
	case len(id) > 200 || strings.ContainsAny(id, "/?#%\\ \t\r\n'\""):
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: %s: not a Gmail id: %q", idName, id)
	}
	return id, nil
}

// Scopes are, per tool, the OAuth scopes (after
// https://www.googleapis.com/auth/) any one of which lets it work, the one
// to ask for first. A send whose answer was lost is confirmed by reading
// Sent, which gmail.send alone does not allow.
func (t Tools) Scopes() map[string][]string {
	read := []string{"gmail.readonly", "gmail.modify"}
	return map[string][]string{"gmail_search_messages": read, "gmail_get_message": read, "gmail_get_thread": read,
		"gmail_get_attachment": read, "gmail_list_labels": read, "gmail_create_draft": {"gmail.modify", "gmail.compose"},
		"gmail_send_message": {"gmail.modify", "gmail.compose", "gmail.send"}, "gmail_reply": {"gmail.modify"},
		"gmail_modify_labels": {"gmail.modify"}}
}
