// Package mailbox holds the email connector's tools that list folders,
// fetch attachments and organize messages over IMAP: flag, move, archive
// and delete. The connector hands them its IMAP sessions, its kit and its
// error mapping through a [Host]; a message is named by the signed ref
// whose id [ID] makes (folder, UIDVALIDITY and UID, as the path of an
// RFC 5092 IMAP URL).
package mailbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// KindMessage is the kind of a message's ref.
const KindMessage = "message"

// Fn is what runs on a logged-in IMAP connection.
type Fn func(ctx context.Context, c *imapclient.Client) error

// Host is what the tools need of the connector.
type Host struct {
	// Kit is the IMAP credential's kit: refs, retries, writes once.
	Kit *saas.Kit
	// Read runs fn on a logged-in connection of call's credential,
	// retried as the kit retries.
	Read func(ctx context.Context, call *connectors.Call, fn Fn) error
	// Login runs fn once on a connection logged in with token: one attempt
	// of a write.
	Login func(ctx context.Context, call *connectors.Call, token string, fn Fn) error
	// Map makes an IMAP failure of what canonical.
	Map func(ctx context.Context, err error, what string) error
	// ArchiveFolder is the configured archive folder ("" to look for the
	// \Archive special-use folder).
	ArchiveFolder string
	// MaxAttachmentBytes bounds the attachments fetched.
	MaxAttachmentBytes int64
}

// ID names a message as the path of an RFC 5092 IMAP URL does.
func ID(folder string, validity uint32, uid imap.UID) string {
	return fmt.Sprintf("%s;UIDVALIDITY=%d/;UID=%d", folder, validity, uid)
}

// ParseID undoes ID.
func ParseID(id string) (folder string, validity uint32, uid imap.UID, ok bool) {
	i := strings.LastIndex(id, "/;UID=")
	j := strings.LastIndex(id, ";UIDVALIDITY=")
	if i < 0 || j < 0 || j > i {
		return "", 0, 0, false
	}
	v, err1 := strconv.ParseUint(id[j+len(";UIDVALIDITY="):i], 10, 32)
	u, err2 := strconv.ParseUint(id[i+len("/;UID="):], 10, 32)
	return id[:j], uint32(v), imap.UID(u), err1 == nil && err2 == nil && u > 0
}

// msg is a message a tool was given.
type msg struct {
	folder   string
	validity uint32
	uid      imap.UID
}

// resolve turns the ref of a message into its place; arg names the
// argument in errors.
func (h *Host) resolve(call *connectors.Call, ref, arg string) (msg, error) {
	if ref == "" {
		return msg{}, legate.Errorf(legate.CodeInvalidArgument, "email: %s: a message ref is needed (from search or read)", arg)
	}
	id, err := h.Kit.Resolve(call, KindMessage, ref)
	if err != nil {
		return msg{}, err
	}
	folder, validity, uid, ok := ParseID(id)
	if !ok {
		return msg{}, saas.Mapping("email", "message ref holds %q", id)
	}
	return msg{folder, validity, uid}, nil
}

// open selects m's folder (read-only unless write) and checks it is the
// folder the ref was made in.
func (h *Host) open(ctx context.Context, c *imapclient.Client, m msg, write bool) error {
	sel, err := c.Select(m.folder, &imap.SelectOptions{ReadOnly: !write}).Wait()
	if err != nil {
		return h.Map(ctx, err, "folder "+strconv.Quote(m.folder))
	}
	if sel.UIDValidity != m.validity {
		return legate.Errorf(legate.CodeNotFound, "email: the message is gone: folder %q was rebuilt since it was found (UIDVALIDITY changed); search again", m.folder)
	}
	return nil
}

// present reports whether m is still in its (selected) folder, with its
// flags and Message-ID.
func (h *Host) present(ctx context.Context, c *imapclient.Client, m msg) (bool, []imap.Flag, string, error) {
	bufs, err := c.Fetch(imap.UIDSetNum(m.uid), &imap.FetchOptions{UID: true, Flags: true, Envelope: true}).Collect()
	if err != nil {
		return false, nil, "", h.Map(ctx, err, "fetch")
	}
	if len(bufs) == 0 {
		return false, nil, "", nil
	}
	id := ""
	if bufs[0].Envelope != nil {
		id = bufs[0].Envelope.MessageID
	}
	return true, bufs[0].Flags, id, nil
}

// gone is the NOT_FOUND of a message no longer in its folder.
func gone(folder string) error {
	return legate.Errorf(legate.CodeNotFound, "email: the message is gone from folder %q (deleted or moved); search again", folder)
}

// Tools are the tools of the package, each with its toolset.
func (h *Host) Tools() []connectors.Tool {
	read := func(t connectors.Tool) connectors.Tool { t.Toolset = "read"; return t }
	org := func(t connectors.Tool) connectors.Tool { t.Toolset = "organize"; return t }
	return []connectors.Tool{
		read(connectors.Returning[Folders](connectors.NewTool("folders",
			"List the mailbox's folders with their special use (sent, trash, archive, drafts, junk, all, flagged), message and unread counts when the server gives them.",
			legate.ClassRead, h.folders))),
		read(connectors.Returning[Attachment](connectors.NewTool("attachment",
			fmt.Sprintf("Fetch one attachment of a message by its part (as read lists them: \"2\", \"1.2\"): its name, type, size and bytes as an embedded resource (base64 blob); at most %d bytes.", h.MaxAttachmentBytes),
			legate.ClassRead, h.attachment))),
		org(connectors.Returning[Change](connectors.NewTool("mark",
			"Mark a message read or unread (read: true/false) and flag or unflag it (flagged: true/false); returns its flags. "+saas.OnceNote,
			legate.ClassWrite, h.mark))),
		org(connectors.Returning[Change](connectors.NewTool("move",
			"Move a message to another folder (a name from folders); returns its ref there. "+saas.OnceNote,
			legate.ClassWrite, h.move))),
		org(connectors.Returning[Change](connectors.NewTool("archive",
			"Move a message to the archive folder (the archive_folder configured, else the server's \\Archive folder); returns its ref there. "+saas.OnceNote,
			legate.ClassWrite, h.archive))),
		org(connectors.Returning[Change](connectors.NewTool("delete",
			"Delete a message: moved to the trash folder (\\Trash) when there is one, else flagged \\Deleted and expunged for good; the result's action says which. "+saas.OnceNote,
			legate.ClassDestructive, h.delete))),
	}
}
