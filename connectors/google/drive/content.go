package drive

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Limits of a file's content read.
const (
	DefaultReadBytes, MaxReadBytes = 64 << 10, 1 << 20
	// MaxQueryBytes bounds a search's query.
	MaxQueryBytes = 2000
)

// Google's own MIME types and what their content is read as.
const (
	MimeFolder       = "application/vnd.google-apps.folder"
	MimeSpreadsheet  = "application/vnd.google-apps.spreadsheet"
	MimeDocument     = "application/vnd.google-apps.document"
	MimePresentation = "application/vnd.google-apps.presentation"
)

type searchIn struct {
	saas.Page
	Q            string `json:"q,omitempty" jsonschema:"a query in Drive's search grammar, passed as it is: fullText contains 'budget' and mimeType = 'application/pdf', modifiedTime > '2026-01-01T00:00:00', 'ID' in parents, sharedWithMe; trashed files are left out"`
	NameContains string `json:"name_contains,omitempty" jsonschema:"only files whose name contains this text (case-insensitive); with q, both must match"`
}

type readIn struct {
	fileArg
	Offset   int `json:"offset,omitempty" jsonschema:"the byte of the text to start at: the next_offset of the previous read"`
	MaxBytes int `json:"max_bytes,omitempty" jsonschema:"the most bytes of text to return (default 65536, at most 1048576)"`
}

// content is a file's text, or a page of it.
type content struct {
	File model.File `json:"file"`
	// As is the MIME type the text was read as: the file's, or the one
	// Google's own file was exported to.
	As         string `json:"as" jsonschema:"the MIME type of the text: the file's own, or what a Google Docs, Sheets or Slides file was exported as (text/markdown, text/csv, text/plain)"`
	Text       string `json:"text,omitempty"`
	Offset     int    `json:"offset"`
	NextOffset int    `json:"next_offset,omitempty" jsonschema:"pass it as offset for the text that follows; absent at the end"`
	Binary     bool   `json:"binary,omitempty" jsonschema:"the file is not text (a PDF, an image...): no text is returned; open url instead"`
}

func (t Tools) searchFiles(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	clauses := []string{"trashed = false"}
	if strings.TrimSpace(in.Q) != "" {
		clauses = append(clauses, "("+in.Q+")")
	}
	if in.NameContains != "" {
		clauses = append(clauses, "name contains "+quote(in.NameContains))
	}
	q := strings.Join(clauses, " and ")
	if len(q) > MaxQueryBytes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: q: at most %d bytes", MaxQueryBytes)
	}
	out, err := t.list(ctx, call, in.Page, q)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: listText(out)}, nil
}

// exportAs is the MIME type Google's own files are read as; "" for those
// that are not text.
func exportAs(mime string) string {
	switch mime {
	case MimeDocument:
		return "text/markdown"
	case MimeSpreadsheet:
		return "text/csv"
	case MimePresentation:
		return "text/plain"
	}
	return ""
}

// textLike reports whether a file of type mime is text.
func textLike(mime string) bool {
	base, _, _ := strings.Cut(mime, ";")
	return strings.HasPrefix(base, "text/") || strings.HasSuffix(base, "+json") || strings.HasSuffix(base, "+xml") ||
		base == "application/json" || base == "application/xml" || base == "application/x-yaml" || base == "application/yaml" ||
		base == "application/javascript" || base == "application/x-sh" || base == "application/sql"
}

func (t Tools) readFile(ctx context.Context, call *connectors.Call, in *readIn) (*legate.Result, error) {
	id, err := t.Core.FileID(call, in.File, in.FileID, "file", "file_id")
	if err != nil {
		return nil, err
	}
	size := in.MaxBytes
	switch {
	case size == 0:
		size = DefaultReadBytes
	case size < 0 || size > MaxReadBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: max_bytes: between 1 and %d, got %d", MaxReadBytes, size)
	}
	if in.Offset < 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: offset: must not be negative")
	}
	var out content
	err = t.Core.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := t.api(ctx, token)
		if err != nil {
			return err
		}
		f, err := api.Files.Get(id).Fields(fileFields).SupportsAllDrives(true).Context(ctx).Do()
		if err != nil {
			return err
		}
		if out.File, err = t.fileOf(call, f); err != nil {
			return err
		}
		var resp *http.Response
		switch as := exportAs(f.MimeType); {
		case as != "":
			out.As = as
			resp, err = api.Files.Export(id, as).Context(ctx).Download()
			if as == "text/markdown" && legate.CodeOf(gcore.MapError(ctx, err)) == legate.CodeInvalidArgument {
				out.As = "text/plain" // an API without Markdown export
				resp, err = api.Files.Export(id, out.As).Context(ctx).Download()
			}
		case textLike(f.MimeType):
			out.As = f.MimeType
			resp, err = api.Files.Get(id).SupportsAllDrives(true).Context(ctx).Download()
		default:
			out.As, out.Binary = f.MimeType, true
			return nil
		}
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out.Text, out.Offset, out.NextOffset, err = window(resp.Body, in.Offset, size)
		return err
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s (%s)", fileText(out.File), out.As)
	switch {
	case out.Binary:
		text += ": not text; open its url"
	default:
		text += fmt.Sprintf(", bytes %d to %d:\n%s", out.Offset, out.Offset+len(out.Text), out.Text)
		if out.NextOffset > 0 {
			text += fmt.Sprintf("\nmore: pass offset %d", out.NextOffset)
		}
	}
	return &legate.Result{Structured: out, Text: text, Meta: owner(out.File)}, nil
}

// window reads the bytes of r from offset, at most size of them, cut at
// a character's start; next is the offset of what follows, 0 at the end.
func window(r io.Reader, offset, size int) (text string, start, next int, err error) {
	if _, err := io.CopyN(io.Discard, r, int64(offset)); err == io.EOF {
		return "", offset, 0, nil
	} else if err != nil {
		return "", 0, 0, err
	}
	buf := make([]byte, size+1)
	n, err := io.ReadFull(r, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", 0, 0, err
	}
	buf = buf[:n]
	if n <= size {
		return strings.ToValidUTF8(string(buf), "\uFFFD"), offset, 0, nil
	}
	cut := size
	for cut > 0 && !utf8.RuneStart(buf[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(buf[:cut]), "\uFFFD"), offset, offset + cut, nil
}
