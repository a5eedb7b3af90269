package google

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// kindFile is the kind of the refs the connector hands out: Drive files,
// folders and spreadsheets alike (a spreadsheet is a Drive file).
const kindFile = "file"

// mimeSpreadsheet is a Google Sheets spreadsheet's Drive MIME type.
const mimeSpreadsheet = "application/vnd.google-apps.spreadsheet"

// fileFields are the fields of a file the connector asks Drive for.
const fileFields = "id,name,mimeType,size,parents,modifiedTime,createdTime,webViewLink,trashed,starred,owners(displayName,emailAddress),md5Checksum"

type fileArg struct {
	File   string `json:"file,omitempty" jsonschema:"ref of the file, from drive_list_files or drive_get_file; or give file_id"`
	FileID string `json:"file_id,omitempty" jsonschema:"the file's Drive id (from its URL), instead of file"`
}

type spreadsheetArg struct {
	Spreadsheet   string `json:"spreadsheet,omitempty" jsonschema:"ref of the spreadsheet: a file ref from drive_list_files or drive_get_file, or the ref of an earlier sheets result; or give spreadsheet_id"`
	SpreadsheetID string `json:"spreadsheet_id,omitempty" jsonschema:"the spreadsheet's id, from its URL (docs.google.com/spreadsheets/d/ID/edit), instead of spreadsheet"`
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

type readRangeIn struct {
	spreadsheetArg
	saas.Page
	Range string `json:"range" jsonschema:"the cells in A1 notation: Sheet1!A1:D50, Sheet1!A:D (whole columns), Sheet1 (a whole sheet) or a named range; a page holds at most limit rows of it"`
}

type appendRowIn struct {
	spreadsheetArg
	Range       string `json:"range" jsonschema:"the table to append to, in A1 notation: a sheet (Sheet1) or its columns (Sheet1!A:D); the row goes below the table's last row"`
	Values      []any  `json:"values" jsonschema:"the row's cells, left to right: strings, numbers, booleans, or null for an empty cell"`
	UserEntered bool   `json:"user_entered,omitempty" jsonschema:"read the values as if typed into the sheet (formulas, dates, numbers in text); by default they are stored as given"`
}

// rangePage is a page of a range read.
type rangePage struct {
	model.SheetRange
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass it as cursor, with the same spreadsheet and range, for the next rows; absent after the last"`
}

func (c *Connector) newTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[rangePage](connectors.NewTool("sheets_read_range",
			fmt.Sprintf("Read the values of a range of a Google Sheets spreadsheet (sheet_range.v1), as the sheet shows them, a page of rows at a time: limit (rows; default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultRows, MaxRows),
			legate.ClassRead, c.readRange)),
		connectors.Returning[saas.List[model.File]](connectors.NewTool("drive_list_files",
			fmt.Sprintf("List Google Drive files (file.v1) the account can see, most recently modified first, trashed files left out, optionally in one folder, by name or by type, a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultFiles, MaxFiles),
			legate.ClassRead, c.listFiles)),
		connectors.Returning[model.File](connectors.NewTool("drive_get_file",
			"Read a Google Drive file's metadata (file.v1), by its ref or its Drive id.", legate.ClassRead, c.getFile)),
		connectors.Returning[model.SheetRange](connectors.NewTool("sheets_append_row",
			"Append one row below the last row of a table in a Google Sheets spreadsheet; returns the row as written (sheet_range.v1). Retrying the same call never appends twice.",
			legate.ClassWrite, c.appendRow)),
	}
}

// fileID resolves a file given by ref or by id.
func (c *Connector) fileID(call *connectors.Call, ref, id, refName, idName string) (string, error) {
	switch {
	case ref != "" && id != "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: give %s or %s, not both", refName, idName)
	case ref != "":
		return c.kit.Resolve(call, kindFile, ref)
	case id == "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: give %s (a ref) or %s", refName, idName)
	case len(id) > 200 || strings.ContainsAny(id, "/?#%\\ \t\r\n'"):
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: %s: not a Google id: %q", idName, id)
	}
	return id, nil
}

func (c *Connector) getFile(ctx context.Context, call *connectors.Call, in *getFileIn) (*legate.Result, error) {
	id, err := c.fileID(call, in.File, in.FileID, "file", "file_id")
	if err != nil {
		return nil, err
	}
	var out model.File
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := c.apis(ctx, token)
		if err != nil {
			return err
		}
		f, err := api.drive.Files.Get(id).Fields(fileFields).SupportsAllDrives(true).Context(ctx).Do()
		if err != nil {
			return mapError(ctx, err)
		}
		out, err = c.fileOf(call, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fileText(out)}, nil
}

// quote is s as a string literal of Drive's query language.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func (c *Connector) listFiles(ctx context.Context, call *connectors.Call, in *listFilesIn) (*legate.Result, error) {
	clauses := []string{"trashed = false"}
	if in.Folder != "" {
		folder, err := c.kit.Resolve(call, kindFile, in.Folder)
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
	p, err := c.kit.Open(call, in.Page, DefaultFiles, MaxFiles)
	if err != nil {
		return nil, err
	}
	// A cursor is bound to the filters of the listing it continues.
	pageToken := ""
	if p.Token != "" {
		tok, forQ, ok := strings.Cut(p.Token, "\n")
		if !ok || forQ != q {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: cursor: it continues a listing with other filters; give the same folder, name_contains and mime_type")
		}
		pageToken = tok
	}
	var out saas.List[model.File]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := c.apis(ctx, token)
		if err != nil {
			return err
		}
		req := api.drive.Files.List().Q(q).OrderBy("modifiedTime desc").PageSize(int64(p.Size)).
			Fields("nextPageToken,files(" + fileFields + ")").SupportsAllDrives(true).IncludeItemsFromAllDrives(true)
		if pageToken != "" {
			req = req.PageToken(pageToken)
		}
		list, err := req.Context(ctx).Do()
		if err != nil {
			return mapError(ctx, err)
		}
		items, err := saas.Convert(list.Files, func(f *drive.File) (model.File, error) { return c.fileOf(call, f) })
		if err != nil {
			return err
		}
		next := ""
		if list.NextPageToken != "" {
			next = list.NextPageToken + "\n" + q
		}
		out = saas.ListOf(c.kit, call, items, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d file(s)", len(out.Items))
	for _, f := range out.Items {
		b.WriteString("\n" + fileText(f))
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// fileOf converts a Drive file to file.v1.
func (c *Connector) fileOf(call *connectors.Call, f *drive.File) (model.File, error) {
	if f == nil || f.Id == "" || f.Name == "" {
		return model.File{}, saas.Mapping("google", "a Drive file without an id or a name")
	}
	out := model.File{
		Object:   c.kit.Object(call, model.FileV1, kindFile, f.Id),
		Name:     f.Name,
		MimeType: f.MimeType,
		Size:     f.Size,
	}
	out.URL = f.WebViewLink
	if len(f.Parents) > 0 {
		out.ParentRef = c.kit.Ref(call, kindFile, f.Parents[0])
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
