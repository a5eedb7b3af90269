// Package docs is the google connector's Docs toolset: read a document
// as Markdown, create one, append text to it or replace text in it,
// through google.golang.org/api/docs/v1 on the connector's core.
package docs

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/api/docs/v1"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Limits of the tools.
const (
	DefaultReadBytes, MaxReadBytes = 64 << 10, 1 << 20
	// MaxTextBytes bounds the text a write adds.
	MaxTextBytes = 1 << 20
)

// mimeDocument is a Google Doc's Drive type.
const mimeDocument = "application/vnd.google-apps.document"

// Tools are the Docs tools of an instance.
type Tools struct{ Core *gcore.Core }

func (t Tools) api(ctx context.Context, token string) (*docs.Service, error) {
	return gcore.Service(t.Core, ctx, token, gcore.Docs, docs.NewService)
}

type docArg struct {
	Document   string `json:"document,omitempty" jsonschema:"ref of the document: a file ref from the drive tools or an earlier docs result; or give document_id"`
	DocumentID string `json:"document_id,omitempty" jsonschema:"the document's id, from its URL (docs.google.com/document/d/ID/edit), instead of document"`
}

type readIn struct {
	docArg
	Offset   int `json:"offset,omitempty" jsonschema:"the byte of the Markdown to start at: the next_offset of the previous read"`
	MaxBytes int `json:"max_bytes,omitempty" jsonschema:"the most bytes of Markdown to return (default 65536, at most 1048576)"`
}

// document is a document, or a page of its Markdown.
type document struct {
	model.Object
	Title      string `json:"title"`
	RevisionID string `json:"revision_id,omitempty"`
	Markdown   string `json:"markdown,omitempty" jsonschema:"the body as Markdown: headings, lists, tables, bold, italic and links kept"`
	Offset     int    `json:"offset"`
	NextOffset int    `json:"next_offset,omitempty" jsonschema:"pass it as offset for what follows; absent at the end"`
	Bytes      int    `json:"bytes" jsonschema:"the length of the whole Markdown"`
}

// List lists the Docs tools.
func (t Tools) List() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[document](connectors.NewTool("docs_read_document",
			"Read a Google Doc as Markdown (headings, lists, tables, bold, italic, links), a bounded window at a time: max_bytes and offset (the next_offset of the previous read).",
			legate.ClassRead, t.read)),
		connectors.Returning[document](connectors.NewTool("docs_create_document",
			"Create a Google Doc with a title and, optionally, its first text. Returns the document. Retrying the same call never creates two.",
			legate.ClassWrite, t.create)),
		connectors.Returning[edit](connectors.NewTool("docs_append_text",
			"Append text at the end of a Google Doc. Retrying the same call never appends twice.",
			legate.ClassWrite, t.appendText)),
		connectors.Returning[edit](connectors.NewTool("docs_replace_text",
			"Replace every occurrence of a text in a Google Doc (match_case optional); returns how many were replaced.",
			legate.ClassWrite, t.replaceText)),
	}
}

// Scopes are the OAuth scopes any one of which lets each tool work.
func (t Tools) Scopes() map[string][]string {
	read := []string{"documents.readonly", "documents", "drive.readonly", "drive"}
	write := []string{"documents", "drive"}
	return map[string][]string{"docs_read_document": read, "docs_create_document": {"drive", "drive.file"},
		"docs_append_text": write, "docs_replace_text": write}
}

// documentURL is where a person opens document id.
func documentURL(id string) string { return "https://docs.google.com/document/d/" + id + "/edit" }

func (t Tools) docID(call *connectors.Call, a docArg) (string, error) {
	return t.Core.FileID(call, a.Document, a.DocumentID, "document", "document_id")
}

func (t Tools) object(call *connectors.Call, id string) model.Object {
	o := t.Core.Kit.Object(call, model.FileV1, gcore.KindFile, id)
	o.URL = documentURL(id)
	return o
}

// get reads document id.
func (t Tools) get(ctx context.Context, token, id string) (*docs.Document, error) {
	api, err := t.api(ctx, token)
	if err != nil {
		return nil, err
	}
	d, err := api.Documents.Get(id).Context(ctx).Do()
	if err != nil {
		return nil, gcore.MapError(ctx, err)
	}
	return d, nil
}

func (t Tools) read(ctx context.Context, call *connectors.Call, in *readIn) (*legate.Result, error) {
	id, err := t.docID(call, in.docArg)
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
	var out document
	err = t.Core.Read(ctx, call, func(ctx context.Context, token string) error {
		d, err := t.get(ctx, token, id)
		if err != nil {
			return err
		}
		md := Markdown(d, in.Offset+size+4)
		out = document{Object: t.object(call, id), Title: d.Title, RevisionID: d.RevisionId, Offset: in.Offset, Bytes: len(md)}
		out.Markdown, out.NextOffset = cut(md, in.Offset, size)
		return nil
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s (%d bytes of Markdown, from %d):\n%s", out.Title, out.Bytes, out.Offset, out.Markdown)
	if out.NextOffset > 0 {
		text += fmt.Sprintf("\nmore: pass offset %d", out.NextOffset)
	}
	return &legate.Result{Structured: out, Text: text}, nil
}

// cut is md's window of size bytes from offset, cut at a character's
// start, and the offset of what follows (0 at the end).
func cut(md string, offset, size int) (string, int) {
	if offset >= len(md) {
		return "", 0
	}
	md = md[offset:]
	if len(md) <= size {
		return md, 0
	}
	end := size
	for end > 0 && md[end]&0xC0 == 0x80 {
		end--
	}
	return md[:end], offset + end
}

// bodyText is d's body as plain text, tables' cells included.
func bodyText(d *docs.Document) string {
	var b strings.Builder
	if d.Body != nil {
		writeText(&b, d.Body.Content)
	}
	return b.String()
}

func writeText(b *strings.Builder, content []*docs.StructuralElement) {
	for _, e := range content {
		switch {
		case e.Paragraph != nil:
			for _, pe := range e.Paragraph.Elements {
				if pe.TextRun != nil {
					b.WriteString(pe.TextRun.Content)
				}
			}
		case e.Table != nil:
			for _, row := range e.Table.TableRows {
				for _, c := range row.TableCells {
					writeText(b, c.Content)
				}
			}
		}
	}
}
