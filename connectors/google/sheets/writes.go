package sheets

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/drive"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// MaxTabs bounds the tabs of a created spreadsheet.
const MaxTabs = 50

type updateIn struct {
	spreadsheetArg
	Range       string  `json:"range" jsonschema:"the cells to write, in A1 notation, from their top-left cell: Sheet1!B2 or Sheet1!B2:D4"`
	Rows        [][]any `json:"rows" jsonschema:"the values, row by row: strings, numbers, booleans, or null to leave a cell as it is"`
	UserEntered bool    `json:"user_entered,omitempty" jsonschema:"read the values as if typed into the sheet (formulas, dates); by default they are stored as given (RAW)"`
}

type createIn struct {
	Title string   `json:"title" jsonschema:"the spreadsheet's title"`
	Tabs  []string `json:"tabs,omitempty" jsonschema:"the names of its tabs (default one, Sheet1)"`
}

type tabsIn struct {
	spreadsheetArg
}

// tab is one sheet of a spreadsheet.
type tab struct {
	Title   string `json:"title"`
	SheetID int64  `json:"sheet_id"`
	Index   int64  `json:"index"`
	Rows    int64  `json:"rows"`
	Columns int64  `json:"columns"`
	Hidden  bool   `json:"hidden,omitempty"`
}

// book is a spreadsheet and its tabs.
type book struct {
	model.Object
	Title string `json:"title"`
	Tabs  []tab  `json:"tabs"`
}

func (t Tools) listTabs(ctx context.Context, call *connectors.Call, in *tabsIn) (*legate.Result, error) {
	id, err := t.Core.FileID(call, in.Spreadsheet, in.SpreadsheetID, "spreadsheet", "spreadsheet_id")
	if err != nil {
		return nil, err
	}
	var out *book
	err = t.Core.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := t.api(ctx, token)
		if err != nil {
			return err
		}
		s, err := api.Spreadsheets.Get(id).Fields("spreadsheetId,properties.title,sheets.properties").Context(ctx).Do()
		if err != nil {
			return err
		}
		out, err = t.bookOf(call, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: bookText(out)}, nil
}

func (t Tools) bookOf(call *connectors.Call, s *sheets.Spreadsheet) (*book, error) {
	if s == nil || s.SpreadsheetId == "" || s.Properties == nil {
		return nil, saas.Mapping("google", "a spreadsheet without an id or properties")
	}
	out := &book{Object: t.Core.Kit.Object(call, model.FileV1, gcore.KindFile, s.SpreadsheetId), Title: s.Properties.Title, Tabs: []tab{}}
	out.URL = spreadsheetURL(s.SpreadsheetId)
	for _, sh := range s.Sheets {
		p := sh.Properties
		if p == nil {
			continue
		}
		tb := tab{Title: p.Title, SheetID: p.SheetId, Index: p.Index, Hidden: p.Hidden}
		if g := p.GridProperties; g != nil {
			tb.Rows, tb.Columns = g.RowCount, g.ColumnCount
		}
		out.Tabs = append(out.Tabs, tb)
	}
	return out, nil
}

func bookText(b *book) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s %s ref %s: %d tab(s)", b.Title, b.URL, b.Ref, len(b.Tabs))
	for _, tb := range b.Tabs {
		fmt.Fprintf(&s, "\n%s (%d rows x %d columns)", tb.Title, tb.Rows, tb.Columns)
	}
	return s.String()
}

func (t Tools) updateRange(ctx context.Context, call *connectors.Call, in *updateIn) (*legate.Result, error) {
	id, err := t.Core.FileID(call, in.Spreadsheet, in.SpreadsheetID, "spreadsheet", "spreadsheet_id")
	if err != nil {
		return nil, err
	}
	if err := t.rangeArg(in.Range); err != nil {
		return nil, err
	}
	if err := checkRows(in.Rows); err != nil {
		return nil, err
	}
	input := "RAW"
	if in.UserEntered {
		input = "USER_ENTERED"
	}
	// values.update on a fixed range is idempotent: a lost answer is sent
	// again (no Find).
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[model.SheetRange]{
		Send: func(ctx context.Context, token, _ string) (*model.SheetRange, error) {
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			resp, err := api.Spreadsheets.Values.Update(id, in.Range, &sheets.ValueRange{Values: in.Rows}).ValueInputOption(input).
				IncludeValuesInResponse(true).ResponseValueRenderOption("FORMATTED_VALUE").Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			if resp.UpdatedRange == "" {
				return nil, saas.Mapping("google", "an update answer without updatedRange")
			}
			var rows [][]string
			if resp.UpdatedData != nil {
				if rows, err = textRows(resp.UpdatedData.Values); err != nil {
					return nil, err
				}
			}
			r := t.sheetRange(call, id, resp.UpdatedRange, parseA1(resp.UpdatedRange).row0, rows)
			r.ProviderMetadata = map[string]any{"updated_cells": resp.UpdatedCells}
			return &r, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "updated " + rangeText(*out, "")}, nil
}

func (t Tools) create(ctx context.Context, call *connectors.Call, in *createIn) (*legate.Result, error) {
	if strings.TrimSpace(in.Title) == "" || len(in.Title) > 1000 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: title: between 1 and 1000 bytes")
	}
	if len(in.Tabs) > MaxTabs {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: tabs: at most %d", MaxTabs)
	}
	s := &sheets.Spreadsheet{Properties: &sheets.SpreadsheetProperties{Title: in.Title}}
	for i, name := range in.Tabs {
		if strings.TrimSpace(name) == "" || len(name) > 100 {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: tabs[%d]: between 1 and 100 bytes", i)
		}
		s.Sheets = append(s.Sheets, &sheets.Sheet{Properties: &sheets.SheetProperties{Title: name}})
	}
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[book]{
		Send: func(ctx context.Context, token, _ string) (*book, error) {
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			made, err := api.Spreadsheets.Create(s).Fields("spreadsheetId,properties.title,sheets.properties").Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			return t.bookOf(call, made)
		},
		// A spreadsheet of the title the account created since.
		Find: func(ctx context.Context, token, _ string, since time.Time) (*book, error) {
			f, err := drive.FindFile(ctx, t.Core, call, token, in.Title, drive.MimeSpreadsheet, since)
			if err != nil || f == nil {
				return nil, err
			}
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			made, err := api.Spreadsheets.Get(f.ExternalID).Fields("spreadsheetId,properties.title,sheets.properties").Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			return t.bookOf(call, made)
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created " + bookText(out)}, nil
}
