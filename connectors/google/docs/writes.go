package docs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/api/docs/v1"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/drive"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
)

type createIn struct {
	Title string `json:"title" jsonschema:"the document's title"`
	Text  string `json:"text,omitempty" jsonschema:"its first text, plain (optional)"`
}

type appendIn struct {
	docArg
	Text string `json:"text" jsonschema:"the text to add at the end, plain; start it with a newline for a new paragraph"`
}

type replaceIn struct {
	docArg
	Find      string `json:"find" jsonschema:"the text to look for"`
	Replace   string `json:"replace" jsonschema:"what to put in its place (empty deletes it)"`
	MatchCase bool   `json:"match_case,omitempty" jsonschema:"match upper and lower case exactly (default: not)"`
}

// edit is the outcome of an edit of a document.
type edit struct {
	Document   string `json:"document_ref"`
	URL        string `json:"url"`
	RevisionID string `json:"revision_id,omitempty"`
	Replaced   int64  `json:"occurrences_changed,omitempty"`
	Found      bool   `json:"found_after_lost_answer,omitempty"`
}

func textArg(name, s string, empty bool) error {
	switch {
	case !empty && s == "":
		return legate.Errorf(legate.CodeInvalidArgument, "google: %s: must not be empty", name)
	case len(s) > MaxTextBytes:
		return legate.Errorf(legate.CodeInvalidArgument, "google: %s: at most %d bytes", name, MaxTextBytes)
	}
	return nil
}

func (t Tools) create(ctx context.Context, call *connectors.Call, in *createIn) (*legate.Result, error) {
	if err := textArg("title", strings.TrimSpace(in.Title), false); err != nil {
		return nil, err
	}
	if err := textArg("text", in.Text, true); err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[document]{
		Send: func(ctx context.Context, token, _ string) (*document, error) {
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			d, err := api.Documents.Create(&docs.Document{Title: in.Title}).Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			return t.fill(ctx, call, token, d.DocumentId, in)
		},
		// A document of the title the account created since, its text
		// added if the lost attempt had not.
		Find: func(ctx context.Context, token, _ string, since time.Time) (*document, error) {
			f, err := drive.FindFile(ctx, t.Core, call, token, in.Title, mimeDocument, since)
			if err != nil || f == nil {
				return nil, err
			}
			return t.fill(ctx, call, token, f.ExternalID, in)
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("created %q %s ref %s", out.Title, out.URL, out.Ref)}, nil
}

// fill writes in's text into the new document id unless it holds it.
func (t Tools) fill(ctx context.Context, call *connectors.Call, token, id string, in *createIn) (*document, error) {
	d, err := t.get(ctx, token, id)
	if err != nil {
		return nil, err
	}
	if in.Text != "" && !strings.Contains(bodyText(d), in.Text) {
		api, err := t.api(ctx, token)
		if err != nil {
			return nil, err
		}
		_, err = api.Documents.BatchUpdate(id, &docs.BatchUpdateDocumentRequest{Requests: []*docs.Request{{
			InsertText: &docs.InsertTextRequest{Text: in.Text, Location: &docs.Location{Index: 1}},
		}}}).Context(ctx).Do()
		if err != nil {
			return nil, gcore.MapError(ctx, err)
		}
	}
	return &document{Object: t.object(call, id), Title: d.Title}, nil
}

func (t Tools) appendText(ctx context.Context, call *connectors.Call, in *appendIn) (*legate.Result, error) {
	id, err := t.docID(call, in.docArg)
	if err != nil {
		return nil, err
	}
	if err := textArg("text", in.Text, false); err != nil {
		return nil, err
	}
	var before string // the revision the first attempt appended to
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[edit]{
		Send: func(ctx context.Context, token, _ string) (*edit, error) {
			d, err := t.get(ctx, token, id)
			if err != nil {
				return nil, err
			}
			if before == "" {
				before = d.RevisionId
			}
			return t.batch(ctx, call, token, id, &docs.Request{InsertText: &docs.InsertTextRequest{Text: in.Text,
				EndOfSegmentLocation: &docs.EndOfSegmentLocation{}}})
		},
		// The document ends with the text, in a revision after the one
		// the first attempt saw (when this call saw it).
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*edit, error) {
			d, err := t.get(ctx, token, id)
			if err != nil {
				return nil, err
			}
			if (before != "" && d.RevisionId == before) || !strings.HasSuffix(strings.TrimSuffix(bodyText(d), "\n"), strings.TrimSuffix(in.Text, "\n")) {
				return nil, nil
			}
			return &edit{Document: t.Core.Kit.Ref(call, gcore.KindFile, id), URL: documentURL(id), RevisionID: d.RevisionId, Found: true}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("appended %d bytes to %s", len(in.Text), out.URL)}, nil
}

func (t Tools) replaceText(ctx context.Context, call *connectors.Call, in *replaceIn) (*legate.Result, error) {
	id, err := t.docID(call, in.docArg)
	if err != nil {
		return nil, err
	}
	if err := textArg("find", in.Find, false); err != nil {
		return nil, err
	}
	if err := textArg("replace", in.Replace, true); err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[edit]{
		Send: func(ctx context.Context, token, _ string) (*edit, error) {
			return t.batch(ctx, call, token, id, &docs.Request{ReplaceAllText: &docs.ReplaceAllTextRequest{
				ContainsText: &docs.SubstringMatchCriteria{Text: in.Find, MatchCase: in.MatchCase}, ReplaceText: in.Replace}})
		},
		// Done when the text is gone, unless the replacement holds it (then
		// sending again is harmless only if it changes nothing: it would).
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*edit, error) {
			d, err := t.get(ctx, token, id)
			if err != nil {
				return nil, err
			}
			body, find := bodyText(d), in.Find
			if !in.MatchCase {
				body, find = strings.ToLower(body), strings.ToLower(find)
			}
			if strings.Contains(body, find) && !strings.Contains(strings.ToLower(in.Replace), strings.ToLower(in.Find)) {
				return nil, nil
			}
			return &edit{Document: t.Core.Kit.Ref(call, gcore.KindFile, id), URL: documentURL(id), RevisionID: d.RevisionId, Found: true}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("replaced %d occurrence(s) in %s", out.Replaced, out.URL)}, nil
}

// batch sends one request of a batchUpdate.
func (t Tools) batch(ctx context.Context, call *connectors.Call, token, id string, req *docs.Request) (*edit, error) {
	api, err := t.api(ctx, token)
	if err != nil {
		return nil, err
	}
	resp, err := api.Documents.BatchUpdate(id, &docs.BatchUpdateDocumentRequest{Requests: []*docs.Request{req}}).Context(ctx).Do()
	if err != nil {
		return nil, gcore.MapError(ctx, err)
	}
	out := &edit{Document: t.Core.Kit.Ref(call, gcore.KindFile, id), URL: documentURL(id)}
	if resp.WriteControl != nil {
		out.RevisionID = resp.WriteControl.RequiredRevisionId
	}
	for _, r := range resp.Replies {
		if r != nil && r.ReplaceAllText != nil {
			out.Replaced += r.ReplaceAllText.OccurrencesChanged
		}
	}
	return out, nil
}
