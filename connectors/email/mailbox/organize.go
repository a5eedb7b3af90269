package mailbox

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Change is the result of mark, move, archive and delete.
type Change struct {
	Message string   `json:"message,omitempty" jsonschema:"ref of the message where it is now; empty when it was expunged, or moved by an attempt whose answer was lost"`
	Folder  string   `json:"folder,omitempty" jsonschema:"the folder it is in now"`
	Action  string   `json:"action" jsonschema:"what was done: marked, moved, moved to trash, expunged, flagged deleted"`
	Labels  []string `json:"labels,omitempty" jsonschema:"its flags now, lower-case without backslash: seen, flagged, answered, draft"`
}

type markIn struct {
	Message string `json:"message" jsonschema:"ref of the message, from search or read"`
	Read    *bool  `json:"read,omitempty" jsonschema:"true marks it read, false unread; omitted leaves it"`
	Flagged *bool  `json:"flagged,omitempty" jsonschema:"true flags (stars) it, false unflags it; omitted leaves it"`
}

type moveIn struct {
	Message string `json:"message" jsonschema:"ref of the message, from search or read"`
	Folder  string `json:"folder" jsonschema:"the folder to move it to, a name from folders"`
}

type refIn struct {
	Message string `json:"message" jsonschema:"ref of the message, from search or read"`
}

func labels(flags []imap.Flag) []string {
	out := []string{}
	for _, f := range flags {
		out = append(out, strings.ToLower(strings.TrimPrefix(string(f), "\\")))
	}
	slices.Sort(out)
	return out
}

// wants reports whether flags are as in asks.
func (in *markIn) wants(flags []imap.Flag) bool {
	has := func(f imap.Flag) bool { return slices.Contains(flags, f) }
	return (in.Read == nil || *in.Read == has(imap.FlagSeen)) && (in.Flagged == nil || *in.Flagged == has(imap.FlagFlagged))
}

func (h *Host) mark(ctx context.Context, call *connectors.Call, in *markIn) (*legate.Result, error) {
	if in.Read == nil && in.Flagged == nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: give read, flagged or both")
	}
	m, err := h.resolve(call, in.Message, "message")
	if err != nil {
		return nil, err
	}
	// The flags are read back: a STORE whose answer was lost is found done
	// when the message carries them.
	check := func(ctx context.Context, c *imapclient.Client, write bool) (*Change, bool, error) {
		if err := h.open(ctx, c, m, write); err != nil {
			return nil, false, err
		}
		ok, flags, _, err := h.present(ctx, c, m)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, gone(m.folder)
		}
		return &Change{Message: in.Message, Folder: m.folder, Action: "marked", Labels: labels(flags)}, in.wants(flags), nil
	}
	out, err := saas.WriteOnce(ctx, h.Kit, call, saas.Write[Change]{
		Send: func(ctx context.Context, token, _ string) (*Change, error) {
			var out *Change
			err := h.Login(ctx, call, token, func(ctx context.Context, c *imapclient.Client) error {
				if _, _, err := check(ctx, c, true); err != nil {
					return err
				}
				for _, s := range []struct {
					on   *bool
					flag imap.Flag
				}{{in.Read, imap.FlagSeen}, {in.Flagged, imap.FlagFlagged}} {
					if s.on == nil {
						continue
					}
					op := imap.StoreFlagsDel
					if *s.on {
						op = imap.StoreFlagsAdd
					}
					if err := c.Store(imap.UIDSetNum(m.uid), &imap.StoreFlags{Op: op, Silent: true, Flags: []imap.Flag{s.flag}}, nil).Close(); err != nil {
						return h.Map(ctx, err, "store")
					}
				}
				var err error
				out, _, err = check(ctx, c, false)
				return err
			})
			return out, err
		},
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Change, error) {
			var out *Change
			err := h.Login(ctx, call, token, func(ctx context.Context, c *imapclient.Client) error {
				ch, done, err := check(ctx, c, false)
				if done {
					out = ch
				}
				return err
			})
			return out, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("message in %s now %s", out.Folder, strings.Join(out.Labels, ", "))}, nil
}

func (h *Host) move(ctx context.Context, call *connectors.Call, in *moveIn) (*legate.Result, error) {
	if strings.TrimSpace(in.Folder) == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: folder: the folder to move to is needed (a name from folders)")
	}
	return h.relocate(ctx, call, in.Message, func(context.Context, *imapclient.Client) (string, error) { return in.Folder, nil })
}

func (h *Host) archive(ctx context.Context, call *connectors.Call, in *refIn) (*legate.Result, error) {
	return h.relocate(ctx, call, in.Message, func(ctx context.Context, c *imapclient.Client) (string, error) {
		if h.ArchiveFolder != "" {
			return h.ArchiveFolder, nil
		}
		f, err := h.special(ctx, c, "archive")
		if err == nil && f == "" {
			err = legate.Errorf(legate.CodeNotFound, "email: the server marks no folder \\Archive; set archive_folder to the folder to archive to (see folders)")
		}
		return f, err
	})
}

// relocate moves the message ref names to the folder dest picks.
func (h *Host) relocate(ctx context.Context, call *connectors.Call, ref string, dest func(context.Context, *imapclient.Client) (string, error)) (*legate.Result, error) {
	m, err := h.resolve(call, ref, "message")
	if err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, h.Kit, call, saas.Write[Change]{
		Send: func(ctx context.Context, token, _ string) (*Change, error) {
			var out *Change
			err := h.Login(ctx, call, token, func(ctx context.Context, c *imapclient.Client) error {
				to, err := dest(ctx, c)
				if err != nil {
					return err
				}
				out, err = h.moveTo(ctx, call, c, m, to)
				return err
			})
			return out, err
		},
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Change, error) {
			var out *Change
			err := h.Login(ctx, call, token, func(ctx context.Context, c *imapclient.Client) error {
				to, err := dest(ctx, c)
				if err != nil {
					return err
				}
				if there, err := h.still(ctx, c, m); err != nil || there {
					return err
				}
				out = &Change{Folder: to, Action: "moved"}
				return nil
			})
			return out, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("message %s from %s to %s", out.Action, m.folder, out.Folder)}, nil
}

// still reports whether m is still in its folder: an attempt whose
// answer was lost did not move or expunge it.
func (h *Host) still(ctx context.Context, c *imapclient.Client, m msg) (bool, error) {
	if err := h.open(ctx, c, m, false); err != nil {
		return false, err
	}
	ok, _, _, err := h.present(ctx, c, m)
	return ok, err
}

// moveTo moves m to folder to, and names it there.
func (h *Host) moveTo(ctx context.Context, call *connectors.Call, c *imapclient.Client, m msg, to string) (*Change, error) {
	if to == m.folder {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: folder: the message is in %q already", to)
	}
	if err := h.open(ctx, c, m, true); err != nil {
		return nil, err
	}
	ok, _, messageID, err := h.present(ctx, c, m)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, gone(m.folder)
	}
	data, err := c.Move(imap.UIDSetNum(m.uid), to).Wait()
	if err != nil {
		return nil, h.Map(ctx, err, "moving to "+strconv.Quote(to))
	}
	out := &Change{Folder: to, Action: "moved"}
	// With UIDPLUS the answer names the message's UID there; without, it
	// is found by its Message-ID.
	if data != nil && data.UIDValidity != 0 {
		if uids, ok := data.DestUIDs.(imap.UIDSet); ok {
			if list, ok := uids.Nums(); ok && len(list) == 1 {
				out.Message = h.Kit.Ref(call, KindMessage, ID(to, data.UIDValidity, list[0]))
				return out, nil
			}
		}
	}
	if messageID == "" {
		return out, nil
	}
	sel, err := c.Select(to, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return nil, h.Map(ctx, err, "folder "+strconv.Quote(to))
	}
	found, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: "<" + messageID + ">"}}}, nil).Wait()
	if err != nil {
		return nil, h.Map(ctx, err, "search")
	}
	if uids := found.AllUIDs(); len(uids) > 0 {
		out.Message = h.Kit.Ref(call, KindMessage, ID(to, sel.UIDValidity, slices.Max(uids)))
	}
	return out, nil
}

func (h *Host) delete(ctx context.Context, call *connectors.Call, in *refIn) (*legate.Result, error) {
	m, err := h.resolve(call, in.Message, "message")
	if err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, h.Kit, call, saas.Write[Change]{
		Send: func(ctx context.Context, token, _ string) (*Change, error) {
			var out *Change
			err := h.Login(ctx, call, token, func(ctx context.Context, c *imapclient.Client) error {
				trash, err := h.special(ctx, c, "trash")
				if err != nil {
					return err
				}
				if trash != "" && trash != m.folder {
					out, err = h.moveTo(ctx, call, c, m, trash)
					if out != nil {
						out.Action = "moved to trash"
					}
					return err
				}
				out, err = h.expunge(ctx, c, m)
				return err
			})
			return out, err
		},
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Change, error) {
			var out *Change
			err := h.Login(ctx, call, token, func(ctx context.Context, c *imapclient.Client) error {
				trash, err := h.special(ctx, c, "trash")
				if err != nil {
					return err
				}
				if there, err := h.still(ctx, c, m); err != nil || there {
					return err
				}
				out = &Change{Action: "expunged"}
				if trash != "" && trash != m.folder {
					out = &Change{Folder: trash, Action: "moved to trash"}
				}
				return nil
			})
			return out, err
		},
	})
	if err != nil {
		return nil, err
	}
	text := "message deleted from " + m.folder + ": " + out.Action
	if out.Folder != "" {
		text += " (" + out.Folder + ")"
	}
	return &legate.Result{Structured: out, Text: text}, nil
}

// expunge flags m \Deleted and expunges it alone (UID EXPUNGE); a server
// without UIDPLUS could only expunge every message flagged \Deleted in the
// folder, so m is left flagged for the server's or a client's next
// expunge.
func (h *Host) expunge(ctx context.Context, c *imapclient.Client, m msg) (*Change, error) {
	if err := h.open(ctx, c, m, true); err != nil {
		return nil, err
	}
	ok, _, _, err := h.present(ctx, c, m)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, gone(m.folder)
	}
	set := imap.UIDSetNum(m.uid)
	if err := c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		return nil, h.Map(ctx, err, "store")
	}
	caps := c.Caps()
	if !caps.Has(imap.CapUIDPlus) && !caps.Has(imap.CapIMAP4rev2) {
		return &Change{Folder: m.folder, Action: "flagged deleted"}, nil
	}
	if err := c.UIDExpunge(set).Close(); err != nil {
		return nil, h.Map(ctx, err, "expunge")
	}
	return &Change{Action: "expunged"}, nil
}
