package mailbox

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// Folder is one folder of the mailbox.
type Folder struct {
	Name string `json:"name" jsonschema:"the folder's full name, as search, move and the config take it"`
	// SpecialUse is the RFC 6154 use the server gives it, lower-case
	// without the backslash: sent, trash, archive, drafts, junk, all, flagged.
	SpecialUse string `json:"special_use,omitempty" jsonschema:"sent, trash, archive, drafts, junk, all, flagged or important, as the server marks it (RFC 6154)"`
	Delimiter  string `json:"delimiter,omitempty" jsonschema:"the separator of the levels of its name"`
	Selectable bool   `json:"selectable" jsonschema:"false for a folder that only holds other folders"`
	Messages   *int64 `json:"messages,omitempty" jsonschema:"messages in it, when the server answers LIST-STATUS"`
	Unread     *int64 `json:"unread,omitempty" jsonschema:"unread messages in it, when the server answers LIST-STATUS"`
}

// Folders is the result of folders.
type Folders struct {
	Folders []Folder `json:"folders"`
}

type foldersIn struct{}

// specialUses are the special-use attributes a folder may carry.
var specialUses = []imap.MailboxAttr{imap.MailboxAttrSent, imap.MailboxAttrTrash, imap.MailboxAttrArchive, imap.MailboxAttrDrafts,
	imap.MailboxAttrJunk, imap.MailboxAttrAll, imap.MailboxAttrFlagged, imap.MailboxAttrImportant}

// list lists every folder, with its special use when the server gives
// it, and its counts when status and the server answers LIST-STATUS.
func (h *Host) list(ctx context.Context, c *imapclient.Client, status bool) ([]Folder, error) {
	caps := c.Caps()
	opts := &imap.ListOptions{ReturnSpecialUse: caps.Has(imap.CapSpecialUse) || caps.Has(imap.CapIMAP4rev2)}
	if status && (caps.Has(imap.CapListStatus) || caps.Has(imap.CapIMAP4rev2)) {
		opts.ReturnStatus = &imap.StatusOptions{NumMessages: true, NumUnseen: true}
	}
	data, err := c.List("", "*", opts).Collect()
	if err != nil {
		return nil, h.Map(ctx, err, "listing folders")
	}
	out := make([]Folder, 0, len(data))
	for _, d := range data {
		f := Folder{Name: d.Mailbox, Selectable: true}
		if d.Delim != 0 {
			f.Delimiter = string(d.Delim)
		}
		for _, a := range d.Attrs {
			switch {
			case slices.ContainsFunc(specialUses, func(s imap.MailboxAttr) bool { return strings.EqualFold(string(s), string(a)) }):
				f.SpecialUse = strings.ToLower(strings.TrimPrefix(string(a), "\\"))
			case strings.EqualFold(string(a), string(imap.MailboxAttrNoSelect)), strings.EqualFold(string(a), string(imap.MailboxAttrNonExistent)):
				f.Selectable = false
			}
		}
		if st := d.Status; st != nil {
			if st.NumMessages != nil {
				n := int64(*st.NumMessages)
				f.Messages = &n
			}
			if st.NumUnseen != nil {
				n := int64(*st.NumUnseen)
				f.Unread = &n
			}
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Folder) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// special is the folder with special use attr ("" when none).
func (h *Host) special(ctx context.Context, c *imapclient.Client, use string) (string, error) {
	folders, err := h.list(ctx, c, false)
	if err != nil {
		return "", err
	}
	for _, f := range folders {
		if f.SpecialUse == use && f.Selectable {
			return f.Name, nil
		}
	}
	return "", nil
}

func (h *Host) folders(ctx context.Context, call *connectors.Call, _ *foldersIn) (*legate.Result, error) {
	var out Folders
	err := h.Read(ctx, call, func(ctx context.Context, c *imapclient.Client) error {
		var err error
		out.Folders, err = h.list(ctx, c, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d folder(s)", len(out.Folders))
	for _, f := range out.Folders {
		fmt.Fprintf(&b, "\n%s", f.Name)
		if f.SpecialUse != "" {
			fmt.Fprintf(&b, " [%s]", f.SpecialUse)
		}
		if f.Messages != nil {
			fmt.Fprintf(&b, " %d message(s)", *f.Messages)
		}
		if f.Unread != nil {
			fmt.Fprintf(&b, ", %d unread", *f.Unread)
		}
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}
