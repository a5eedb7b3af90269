// Package drive is the google connector's Drive toolset: list, search and
// read files, through google.golang.org/api/drive/v3 on the connector's
// core.
package drive

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// Limits of the tools.
const (
	// DefaultFiles and MaxFiles are the page size of a listing.
	DefaultFiles, MaxFiles = 100, 1000
)

// Tools are the Drive tools of an instance.
type Tools struct {
	Core *gcore.Core
	// Public lets drive_share_file share with anyone (type anyone): the
	// config's allow_public_sharing.
	Public bool
}

func (t Tools) api(ctx context.Context, token string) (*drive.Service, error) {
	return gcore.Service(t.Core, ctx, token, gcore.Drive, drive.NewService)
}

// fileFields are the fields of a file the connector asks Drive for.
const fileFields = "id,name,mimeType,size,parents,modifiedTime,createdTime,webViewLink,trashed,starred,owners(displayName,emailAddress),md5Checksum"

type fileArg struct {
	File   string `json:"file,omitempty" jsonschema:"ref of the file, from drive_list_files or drive_get_file; or give file_id"`
	FileID string `json:"file_id,omitempty" jsonschema:"the file's Drive id (from its URL), instead of file"`
}

type getFileIn struct {
	fileArg
}

type listFilesIn struct {
	saas.Page
	Folder       string `json:"folder,omitempty" jsonschema:"ref of a folder: only the files directly in it"`
	NameContains string `json:"name_contains,omitempty" jsonschema:"only files whose name contains this text (case-insensitive)"`
	MimeType     string `json:"mime_type,omitempty" jsonschema:"only files of this MIME type, e.g. application/vnd.google-apps.spreadsheet for spreadsheets, application/vnd.google-apps.folder for folders"`
}

// List lists the Drive tools.
func (t Tools) List() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[saas.List[model.File]](connectors.NewTool("drive_list_files",
			fmt.Sprintf("List Google Drive files (file.v1) the account can see, most recently modified first, trashed files left out, optionally in one folder, by name or by type, a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultFiles, MaxFiles),
			legate.ClassRead, t.listFiles)),
		connectors.Returning[model.File](connectors.NewTool("drive_get_file",
			"Read a Google Drive file's metadata (file.v1), by its ref or its Drive id.", legate.ClassRead, t.getFile)),
		connectors.Returning[saas.List[model.File]](connectors.NewTool("drive_search_files",
			fmt.Sprintf("Search Google Drive files (file.v1) with Drive's query grammar (q, passed as it is: fullText contains 'x', mimeType = '...', modifiedTime > '...', 'ID' in parents) and/or name_contains, most recently modified first, trashed files left out, a page at a time: limit (default %d, at most %d) and cursor.", DefaultFiles, MaxFiles),
			legate.ClassRead, t.searchFiles)),
		connectors.Returning[content](connectors.NewTool("drive_read_file",
			"Read a Google Drive file's content as text, a bounded window at a time (max_bytes, offset from next_offset): Google Docs as Markdown, Sheets as CSV (first sheet), Slides as plain text, text files as they are; a PDF or an image is reported binary, without content.",
			legate.ClassRead, t.readFile)),
		connectors.Returning[model.File](connectors.NewTool("drive_upload_file",
			"Create a Google Drive file from text content: name, content, mime_type (default text/plain; a Google Docs or Sheets type converts it), folder. Returns the file (file.v1). Retrying the same call never creates two.",
			legate.ClassWrite, t.uploadFile)),
		connectors.Returning[permission](connectors.NewTool("drive_share_file",
			"Share a Google Drive file: type user, group or domain (anyone only when the instance allows public sharing), role reader, commenter or writer. Returns the permission.",
			legate.ClassWrite, t.shareFile)),
	}
}

func (t Tools) getFile(ctx context.Context, call *connectors.Call, in *getFileIn) (*legate.Result, error) {
	id, err := t.Core.FileID(call, in.File, in.FileID, "file", "file_id")
	if err != nil {
		return nil, err
	}
	var out model.File
	err = t.Core.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := t.api(ctx, token)
		if err != nil {
			return err
		}
		f, err := api.Files.Get(id).Fields(fileFields).SupportsAllDrives(true).Context(ctx).Do()
		if err != nil {
			return gcore.MapError(ctx, err)
		}
		out, err = t.fileOf(call, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fileText(out), Meta: owner(out)}, nil
}

// quote is s as a string literal of Drive's query language.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func (t Tools) listFiles(ctx context.Context, call *connectors.Call, in *listFilesIn) (*legate.Result, error) {
	clauses := []string{"trashed = false"}
	if in.Folder != "" {
		folder, err := t.Core.Kit.Resolve(call, gcore.KindFile, in.Folder)
		if err != nil {
			return nil, err
		}
		clauses = append(clauses, quote(folder)+" in parents")
	}
	if in.NameContains != "" {
		clauses = append(clauses, "name contains "+quote(in.NameContains))
	}
	if in.MimeType != "" {
		clauses = append(clauses, "mimeType = "+quote(in.MimeType))
	}
	q := strings.Join(clauses, " and ")
	if len(q) > 2000 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: the filters are too long")
	}
	out, err := t.list(ctx, call, in.Page, q)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: listText(out)}, nil
}

// list lists a page of the files q matches, most recently modified first.
func (t Tools) list(ctx context.Context, call *connectors.Call, page saas.Page, q string) (saas.List[model.File], error) {
	var out saas.List[model.File]
	p, err := t.Core.Kit.Open(call, page, DefaultFiles, MaxFiles)
	if err != nil {
		return out, err
	}
	// A cursor is bound to the query of the listing it continues.
	pageToken := ""
	if p.Token != "" {
		tok, forQ, ok := strings.Cut(p.Token, "\n")
		if !ok || forQ != q {
			return out, legate.Errorf(legate.CodeInvalidArgument, "google: cursor: it continues a listing with other filters; give the same filters")
		}
		pageToken = tok
	}
	err = t.Core.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := t.api(ctx, token)
		if err != nil {
			return err
		}
		req := api.Files.List().Q(q).OrderBy("modifiedTime desc").PageSize(int64(p.Size)).
			Fields("nextPageToken,files(" + fileFields + ")").SupportsAllDrives(true).IncludeItemsFromAllDrives(true)
		if pageToken != "" {
			req = req.PageToken(pageToken)
		}
		list, err := req.Context(ctx).Do()
		if err != nil {
			return gcore.MapError(ctx, err)
		}
		items, err := saas.Convert(list.Files, func(f *drive.File) (model.File, error) { return t.fileOf(call, f) })
		if err != nil {
			return err
		}
		next := ""
		if list.NextPageToken != "" {
			next = list.NextPageToken + "\n" + q
		}
		out = saas.ListOf(t.Core.Kit, call, items, next)
		return nil
	})
	return out, err
}

// listText is a page of files in a few lines.
func listText(out saas.List[model.File]) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d file(s)", len(out.Items))
	for _, f := range out.Items {
		b.WriteString("\n" + fileText(f))
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return b.String()
}

// fileOf converts a Drive file to file.v1.
func (t Tools) fileOf(call *connectors.Call, f *drive.File) (model.File, error) {
	if f == nil || f.Id == "" || f.Name == "" {
		return model.File{}, saas.Mapping("google", "a Drive file without an id or a name")
	}
	out := model.File{
		Object:   t.Core.Kit.Object(call, model.FileV1, gcore.KindFile, f.Id),
		Name:     f.Name,
		MimeType: f.MimeType,
		Size:     f.Size,
	}
	out.URL = f.WebViewLink
	if len(f.Parents) > 0 {
		out.ParentRef = t.Core.Kit.Ref(call, gcore.KindFile, f.Parents[0])
	}
	if f.ModifiedTime != "" {
		t, err := time.Parse(time.RFC3339, f.ModifiedTime)
		if err != nil {
			return model.File{}, saas.Mapping("google", "a Drive file's modifiedTime %q is not a time", f.ModifiedTime)
		}
		out.ModifiedAt = t.UTC()
	}
	meta := map[string]any{}
	if f.CreatedTime != "" {
		meta["created_time"] = f.CreatedTime
	}
	if f.Starred {
		meta["starred"] = true
	}
	if f.Md5Checksum != "" {
		meta["md5_checksum"] = f.Md5Checksum
	}
	var owners []string
	for _, o := range f.Owners {
		if o != nil && o.EmailAddress != "" {
			owners = append(owners, o.EmailAddress)
		}
	}
	if len(owners) > 0 {
		meta["owners"] = owners
	}
	if len(meta) > 0 {
		out.ProviderMetadata = meta
	}
	return out, nil
}

// owner is the result _meta naming f's owner, by e-mail, as its author
// (provenance.Author): nil for a shared drive's file, which has none.
func owner(f model.File) map[string]any {
	if owners, _ := f.ProviderMetadata["owners"].([]string); len(owners) > 0 {
		return provenance.Author(owners[0])
	}
	return nil
}

// fileText is a file in one line.
func fileText(f model.File) string {
	s := f.Name
	if f.MimeType != "" {
		s += " [" + strings.TrimPrefix(f.MimeType, "application/vnd.google-apps.") + "]"
	}
	if !f.ModifiedAt.IsZero() {
		s += " modified " + f.ModifiedAt.Format(time.RFC3339)
	}
	if f.URL != "" {
		s += " " + f.URL
	}
	return s + " ref " + f.Ref
}

// Scopes are the OAuth scopes any one of which lets each tool work
// (drive.file too, but only on files the app opened or created).
func (t Tools) Scopes() map[string][]string {
	meta := []string{"drive.metadata.readonly", "drive.metadata", "drive.readonly", "drive"}
	read := []string{"drive.readonly", "drive"}
	return map[string][]string{"drive_list_files": meta, "drive_get_file": meta, "drive_search_files": meta,
		"drive_read_file": read, "drive_upload_file": {"drive.file", "drive"}, "drive_share_file": {"drive"}}
}

// Probe lists one file, for a connection test: the number listed.
func Probe(ctx context.Context, core *gcore.Core, call *connectors.Call) (int, error) {
	var n int
	t := Tools{Core: core}
	err := core.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := t.api(ctx, token)
		if err != nil {
			return err
		}
		list, err := api.Files.List().PageSize(1).Fields("files(id)").Context(ctx).Do()
		if err != nil {
			return err
		}
		n = len(list.Files)
		return nil
	})
	return n, err
}
