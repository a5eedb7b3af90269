// Package sheets is the google connector's Sheets toolset: read a range
// of a spreadsheet a page of rows at a time, append rows below a table,
// through google.golang.org/api/sheets/v4 on the connector's core.
package sheets

import (
	"context"
	"fmt"

	"google.golang.org/api/sheets/v4"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Limits of the tools.
const (
	// DefaultRows and MaxRows are the page size of a range read (rows).
	DefaultRows, MaxRows = 100, 1000
	// MaxCells bounds the cells of an appended row, MaxCellBytes one
	// cell (Sheets' own limit is 50000 characters).
	MaxCells     = 1000
	MaxCellBytes = 50000
	// MaxRangeBytes bounds a range argument.
	MaxRangeBytes = 500
)

// Tools are the Sheets tools of an instance.
type Tools struct{ Core *gcore.Core }

func (t Tools) api(ctx context.Context, token string) (*sheets.Service, error) {
	return gcore.Service(t.Core, ctx, token, gcore.Sheets, sheets.NewService)
}

type spreadsheetArg struct {
	Spreadsheet   string `json:"spreadsheet,omitempty" jsonschema:"ref of the spreadsheet: a file ref from drive_list_files or drive_get_file, or the ref of an earlier sheets result; or give spreadsheet_id"`
	SpreadsheetID string `json:"spreadsheet_id,omitempty" jsonschema:"the spreadsheet's id, from its URL (docs.google.com/spreadsheets/d/ID/edit), instead of spreadsheet"`
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

// List lists the Sheets tools.
func (t Tools) List() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[rangePage](connectors.NewTool("sheets_read_range",
			fmt.Sprintf("Read the values of a range of a Google Sheets spreadsheet (sheet_range.v1), as the sheet shows them, a page of rows at a time: limit (rows; default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultRows, MaxRows),
			legate.ClassRead, t.readRange)),
		connectors.Returning[model.SheetRange](connectors.NewTool("sheets_append_row",
			"Append one row below the last row of a table in a Google Sheets spreadsheet; returns the row as written (sheet_range.v1). Retrying the same call never appends twice.",
			legate.ClassWrite, t.appendRow)),
		connectors.Returning[book](connectors.NewTool("sheets_list_tabs",
			"List the tabs (sheets) of a Google Sheets spreadsheet: title, id, size; with the spreadsheet's title and ref.",
			legate.ClassRead, t.listTabs)),
		connectors.Returning[model.SheetRange](connectors.NewTool("sheets_update_range",
			"Write values into a range of a Google Sheets spreadsheet, over what is there (values.update; RAW, or user_entered to parse them as typed). Returns the range as written.",
			legate.ClassWrite, t.updateRange)),
		connectors.Returning[model.SheetRange](connectors.NewTool("sheets_append_rows",
			fmt.Sprintf("Append rows (at most %d) below the last row of a table in a Google Sheets spreadsheet; returns them as written (sheet_range.v1). Retrying the same call never appends twice.", MaxAppendRows),
			legate.ClassWrite, t.appendRows)),
		connectors.Returning[book](connectors.NewTool("sheets_create_spreadsheet",
			"Create a Google Sheets spreadsheet with a title and, optionally, named tabs. Returns it with its tabs. Retrying the same call never creates two.",
			legate.ClassWrite, t.create)),
	}
}

// Scopes are the OAuth scopes any one of which lets each tool work.
func (t Tools) Scopes() map[string][]string {
	return map[string][]string{
		"sheets_read_range":         {"spreadsheets.readonly", "spreadsheets", "drive.readonly", "drive"},
		"sheets_append_row":         {"spreadsheets", "drive"},
		"sheets_append_rows":        {"spreadsheets", "drive"},
		"sheets_update_range":       {"spreadsheets", "drive"},
		"sheets_list_tabs":          {"spreadsheets.readonly", "spreadsheets", "drive.readonly", "drive"},
		"sheets_create_spreadsheet": {"drive", "drive.file"},
	}
}

// spreadsheetURL is where a person opens spreadsheet id.
func spreadsheetURL(id string) string {
	return "https://docs.google.com/spreadsheets/d/" + id + "/edit"
}
