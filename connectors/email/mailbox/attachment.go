package mailbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/email/mimetext"
)

// Attachment is the result of attachment: the file, and the file as an
// MCP embedded resource.
type Attachment struct {
	Part     string   `json:"part" jsonschema:"the part of the message it is, as read lists it"`
	Name     string   `json:"name"`
	MimeType string   `json:"mime_type"`
	Size     int64    `json:"size" jsonschema:"bytes, decoded"`
	Resource Resource `json:"resource" jsonschema:"the file as an MCP embedded resource: uri, mimeType and blob (base64)"`
}

// Resource is an MCP embedded resource's contents (a blob).
type Resource struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Blob     string `json:"blob" jsonschema:"the bytes, base64 (standard alphabet)"`
}

type attachmentIn struct {
	Message string `json:"message" jsonschema:"ref of the message, from search or read"`
	Part    string `json:"part" jsonschema:"the attachment's part, as read lists it: \"2\", \"1.2\""`
}

// parsePart turns "1.2" into a body section path.
func parsePart(s string) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	var out []int
	for _, f := range strings.Split(s, ".") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1000 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, len(out) <= 20
}

// partAt is the single part of bs at path.
func partAt(bs imap.BodyStructure, path []int) *imap.BodyStructureSinglePart {
	var found *imap.BodyStructureSinglePart
	bs.Walk(func(p []int, part imap.BodyStructure) bool {
		if sp, ok := part.(*imap.BodyStructureSinglePart); ok && slices.Equal(p, path) {
			found = sp
		}
		return found == nil
	})
	return found
}

func (h *Host) attachment(ctx context.Context, call *connectors.Call, in *attachmentIn) (*legate.Result, error) {
	m, err := h.resolve(call, in.Message, "message")
	if err != nil {
		return nil, err
	}
	path, ok := parsePart(in.Part)
	if !ok {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: part: want a part as read lists it (\"2\", \"1.2\"), got %q", in.Part)
	}
	var out Attachment
	err = h.Read(ctx, call, func(ctx context.Context, c *imapclient.Client) error {
		if err := h.open(ctx, c, m, false); err != nil {
			return err
		}
		bufs, err := c.Fetch(imap.UIDSetNum(m.uid), &imap.FetchOptions{UID: true, BodyStructure: &imap.FetchItemBodyStructure{Extended: true}}).Collect()
		if err != nil {
			return h.Map(ctx, err, "fetch")
		}
		if len(bufs) == 0 || bufs[0].BodyStructure == nil {
			return gone(m.folder)
		}
		sp := partAt(bufs[0].BodyStructure, path)
		if sp == nil {
			return legate.Errorf(legate.CodeNotFound, "email: the message has no part %s; read lists its attachments and their parts", in.Part)
		}
		enc := strings.ToLower(sp.Encoding)
		size := int64(sp.Size)
		if enc == "base64" {
			size = size * 3 / 4
		}
		if size > h.MaxAttachmentBytes {
			return legate.Errorf(legate.CodeInvalidArgument, "email: part %s is about %d bytes, more than max_attachment_bytes (%d)", in.Part, size, h.MaxAttachmentBytes)
		}
		section := &imap.FetchItemBodySection{Part: path, Peek: true}
		got, err := c.Fetch(imap.UIDSetNum(m.uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return h.Map(ctx, err, "fetch")
		}
		if len(got) == 0 {
			return gone(m.folder)
		}
		data, err := decode(got[0].FindBodySection(section), enc)
		if err != nil {
			return legate.Errorf(legate.CodeAdapterMapping, "email: part %s does not decode as %s: %v", in.Part, enc, err)
		}
		if int64(len(data)) > h.MaxAttachmentBytes {
			return legate.Errorf(legate.CodeInvalidArgument, "email: part %s is %d bytes, more than max_attachment_bytes (%d)", in.Part, len(data), h.MaxAttachmentBytes)
		}
		name := mimetext.WordDecode(sp.Filename())
		if name == "" {
			name = "part-" + in.Part
		}
		out = Attachment{Part: in.Part, Name: name, MimeType: sp.MediaType(), Size: int64(len(data))}
		out.Resource = Resource{URI: "attachment:///" + url.PathEscape(name), MimeType: out.MimeType, Blob: base64.StdEncoding.EncodeToString(data)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("attachment %s (%s, %d bytes), in resource.blob as base64", out.Name, out.MimeType, out.Size)}, nil
}

// decode undoes a part's transfer encoding.
func decode(raw []byte, enc string) ([]byte, error) {
	switch enc {
	case "base64":
		clean := bytes.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, raw)
		return base64.StdEncoding.DecodeString(string(clean))
	case "quoted-printable":
		return io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
	}
	return raw, nil
}
