package slack

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// kindFile is the kind of a file's ref.
const kindFile = "file"

var fileID = regexp.MustCompile(`^F[A-Z0-9]{2,}$`)

type uploadFileIn struct {
	Channel  string `json:"channel" jsonschema:"where to share it: a channel ref, an id, #name, or a person (@handle, U…, e-mail) to DM"`
	Filename string `json:"filename" jsonschema:"the file's name, with its extension: notes.md"`
	Content  string `json:"content,omitempty" jsonschema:"the file's text; or content_base64 for bytes"`
	Base64   string `json:"content_base64,omitempty" jsonschema:"the file's bytes, base64 (standard alphabet)"`
	Title    string `json:"title,omitempty"`
	Comment  string `json:"comment,omitempty" jsonschema:"a message posted with the file"`
	Thread   string `json:"thread,omitempty" jsonschema:"share it in this message's thread (ref or permalink) instead"`
}

type readFileIn struct {
	File string `json:"file" jsonschema:"the file: its ref (from upload_file, read_file) or its id (F…, in a message's provider_metadata.file_ids)"`
}

// FileOut is a file's metadata and, for a text file, its text.
type FileOut struct {
	model.File
	Content   string `json:"content,omitempty" jsonschema:"the file's text, when it is text"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"content was cut at the instance's max_file_bytes; the file's url holds the rest"`
	Text      bool   `json:"text" jsonschema:"the file is text, and content holds it"`
}

// filer runs the file tools.
type filer struct{ *base }

func (c *Connector) fileTools() []connectors.Tool {
	f := filer{c.base}
	return []connectors.Tool{
		inToolset("files", connectors.Returning[model.File](connectors.NewTool("upload_file",
			writes(fmt.Sprintf("Upload a file (text, or bytes in base64; at most %d bytes) and share it in a channel, a DM or a thread, as the token's account (files.getUploadURLExternal, files.completeUploadExternal); returns the file (file.v1).", MaxUploadBytes)),
			legate.ClassWrite, f.uploadFile))),
		inToolset("files", connectors.Returning[FileOut](connectors.NewTool("read_file",
			"Read a file's metadata (file.v1) and, when it is text (text/*, JSON, XML, YAML, CSV, code snippets), its content, cut at the instance's max_file_bytes (the result says so; its url holds the rest).",
			legate.ClassRead, f.readFile))),
	}
}

// fileOf converts a Slack file.
func (c filer) fileOf(call *connectors.Call, f slack.File) model.File {
	out := model.File{Object: c.kit.Object(call, model.FileV1, kindFile, f.ID), Name: f.Name, MimeType: f.Mimetype, Size: int64(f.Size)}
	out.URL = f.Permalink
	if t := f.Timestamp.Time(); f.Timestamp > 0 {
		out.ModifiedAt = t.UTC()
	} else if f.Created > 0 {
		out.ModifiedAt = f.Created.Time().UTC()
	}
	meta := map[string]any{"filetype": f.Filetype}
	if f.Title != "" {
		meta["title"] = f.Title
	}
	if f.User != "" {
		meta["user"] = f.User
	}
	if len(f.Channels) > 0 {
		meta["channels"] = f.Channels
	}
	out.ProviderMetadata = meta
	return out
}

// content is an upload's bytes.
func (in *uploadFileIn) content() ([]byte, error) {
	switch {
	case in.Content != "" && in.Base64 != "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: give content or content_base64, not both")
	case in.Base64 != "":
		b, err := base64.StdEncoding.DecodeString(in.Base64)
		if err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: content_base64: not base64: %v", err)
		}
		return b, nil
	case in.Content != "":
		return []byte(in.Content), nil
	}
	return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: content: the file is empty; give content or content_base64")
}

func (c filer) uploadFile(ctx context.Context, call *connectors.Call, in *uploadFileIn) (*legate.Result, error) {
	data, err := in.content()
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Filename)
	switch {
	case len(data) > MaxUploadBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: the file has %d bytes; at most %d", len(data), MaxUploadBytes)
	case name == "" || strings.ContainsAny(name, "/\\"):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: filename: a file's name without a path, got %q", in.Filename)
	}
	threadTS := ""
	if in.Thread != "" {
		id, err := c.message(call, in.Thread)
		if err != nil {
			return nil, err
		}
		_, threadTS = splitMessageID(id)
	}
	var channel string
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) (err error) {
		channel, err = c.channel(ctx, call, token, in.Channel)
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.File]{
		Send: func(ctx context.Context, token, _ string) (*model.File, error) {
			api := c.client(token)
			up, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: name, FileSize: len(data)})
			if err != nil {
				return nil, mapError(ctx, err)
			}
			if err := api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: up.UploadURL, Reader: bytes.NewReader(data), Filename: name}); err != nil {
				return nil, mapError(ctx, err)
			}
			done, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
				Files: []slack.FileSummary{{ID: up.FileID, Title: cmp.Or(in.Title, name)}}, Channel: channel, InitialComment: in.Comment, ThreadTimestamp: threadTS})
			if err != nil {
				return nil, mapError(ctx, err)
			}
			if len(done.Files) == 0 {
				return nil, saas.Mapping("slack", "files.completeUploadExternal answered without the file")
			}
			f := c.fileOf(call, slack.File{ID: done.Files[0].ID, Name: name, Title: done.Files[0].Title, Size: len(data), Channels: []string{channel}})
			return &f, nil
		},
		// The same name and size, shared in the channel by the token's
		// account since the first attempt, is its upload.
		Find: func(ctx context.Context, token, _ string, since time.Time) (*model.File, error) {
			api := c.client(token)
			me, err := c.dir.WhoAmI(ctx, api, token)
			if err != nil {
				return nil, mapError(ctx, err)
			}
			files, _, err := api.GetFilesContext(ctx, slack.GetFilesParameters{Channel: channel, User: me.User, TimestampFrom: slack.JSONTime(since.Unix()), Count: 100})
			if err != nil {
				return nil, mapError(ctx, err)
			}
			i := slices.IndexFunc(files, func(f slack.File) bool { return f.Name == name && f.Size == len(data) })
			if i < 0 {
				return nil, nil
			}
			f := c.fileOf(call, files[i])
			return &f, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("uploaded %s (%d bytes): %s", out.Name, out.Size, out.Ref)}, nil
}

func (c filer) readFile(ctx context.Context, call *connectors.Call, in *readFileIn) (*legate.Result, error) {
	id := strings.TrimSpace(in.File)
	if !fileID.MatchString(id) {
		var err error
		if id, err = c.kit.Resolve(call, kindFile, id); err != nil {
			return nil, legate.Errorf(legate.CodeNotFound, "slack: no file %q: pass a file ref or a file id (F…)", in.File)
		}
	}
	var out FileOut
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api := c.client(token)
		f, _, _, err := api.GetFileInfoContext(ctx, id, 0, 0)
		if err != nil {
			return mapError(ctx, err)
		}
		out = FileOut{File: c.fileOf(call, *f), Text: isText(*f)}
		if !out.Text {
			return nil
		}
		src := cmp.Or(f.URLPrivateDownload, f.URLPrivate)
		if src == "" {
			return saas.Mapping("slack", "files.info answered a text file without url_private")
		}
		buf := &capped{max: c.cfg.MaxFileBytes}
		if err := api.GetFileContext(ctx, src, buf); err != nil && !errors.Is(err, errCapped) {
			return mapError(ctx, err)
		}
		b := buf.b.Bytes()
		if buf.cut {
			b = httpkit.TrimPartialRune(b)
		}
		out.Content, out.Truncated = string(b), buf.cut
		return nil
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s (%s, %d bytes)", out.Name, out.MimeType, out.Size)
	switch {
	case !out.Text:
		text += ": not text; its content is not read"
	case out.Truncated:
		text += fmt.Sprintf("\n%s\n[cut at %d bytes of %d: open the file's url for the rest]", out.Content, len(out.Content), out.Size)
	default:
		text += "\n" + out.Content
	}
	return &legate.Result{Structured: out, Text: text}, nil
}

// isText reports whether f's content is text read_file returns.
func isText(f slack.File) bool {
	m := strings.ToLower(f.Mimetype)
	if strings.HasPrefix(m, "text/") {
		return true
	}
	for _, t := range []string{"json", "xml", "yaml", "csv", "javascript", "x-sh", "x-python", "sql", "toml"} {
		if strings.Contains(m, t) {
			return true
		}
	}
	return slices.Contains([]string{"text", "markdown", "post", "csv", "json", "yaml", "go", "python", "javascript", "shell", "sql", "xml", "html", "css", "diff", "java", "ruby", "rust", "typescript", "c", "cpp"}, f.Filetype)
}

// errCapped ends a download at its cap.
var errCapped = errors.New("capped")

// capped keeps the first max bytes written to it, then fails the copy.
type capped struct {
	b   bytes.Buffer
	max int
	cut bool
}

func (w *capped) Write(p []byte) (int, error) {
	room := w.max - w.b.Len()
	if len(p) > room {
		w.b.Write(p[:max(room, 0)])
		w.cut = true
		return max(room, 0), errCapped
	}
	return w.b.Write(p)
}
