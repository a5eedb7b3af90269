package sheets

import (
	"context"
	"slices"
	"strings"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// MaxAppendRows bounds the rows of one append.
const MaxAppendRows = 1000

type appendRowsIn struct {
	spreadsheetArg
	Range       string  `json:"range" jsonschema:"the table to append to, in A1 notation: a sheet (Sheet1) or its columns (Sheet1!A:D); the rows go below the table's last row"`
	Rows        [][]any `json:"rows" jsonschema:"the rows, each its cells left to right: strings, numbers, booleans, or null for an empty cell"`
	UserEntered bool    `json:"user_entered,omitempty" jsonschema:"read the values as if typed into the sheet (formulas, dates, numbers in text); by default they are stored as given"`
}

func (t Tools) appendRow(ctx context.Context, call *connectors.Call, in *appendRowIn) (*legate.Result, error) {
	return t.appendRows(ctx, call, &appendRowsIn{spreadsheetArg: in.spreadsheetArg, Range: in.Range, Rows: [][]any{in.Values}, UserEntered: in.UserEntered})
}

// checkRows checks the cells of rows.
func checkRows(rows [][]any) error {
	if len(rows) == 0 || len(rows) > MaxAppendRows {
		return legate.Errorf(legate.CodeInvalidArgument, "google: rows: between 1 and %d rows, got %d", MaxAppendRows, len(rows))
	}
	cells := 0
	for r, row := range rows {
		cells += len(row)
		if len(row) == 0 || len(row) > MaxCells {
			return legate.Errorf(legate.CodeInvalidArgument, "google: values: between 1 and %d cells a row, got %d in row %d", MaxCells, len(row), r)
		}
		for i, v := range row {
			switch v := v.(type) {
			case string:
				if len(v) > MaxCellBytes {
					return legate.Errorf(legate.CodeInvalidArgument, "google: values[%d]: at most %d bytes", i, MaxCellBytes)
				}
			case float64, bool, nil:
			default:
				return legate.Errorf(legate.CodeInvalidArgument, "google: values[%d]: a string, a number, a boolean or null, got %T", i, v)
			}
		}
	}
	if cells > 10*MaxCells*10 {
		return legate.Errorf(legate.CodeInvalidArgument, "google: rows: at most %d cells in all", 10*MaxCells*10)
	}
	return nil
}

func (t Tools) appendRows(ctx context.Context, call *connectors.Call, in *appendRowsIn) (*legate.Result, error) {
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
	markers := t.Core.Kit.Markers()
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[model.SheetRange]{
		Send: func(ctx context.Context, token, marker string) (*model.SheetRange, error) {
			rows := in.Rows
			if markers {
				rows = make([][]any, len(in.Rows))
				for i, r := range in.Rows {
					rows[i] = append(append(make([]any, 0, len(r)+1), r...), marker)
				}
			}
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			resp, err := api.Spreadsheets.Values.Append(id, in.Range, &sheets.ValueRange{Values: rows}).
				ValueInputOption(input).InsertDataOption("INSERT_ROWS").IncludeValuesInResponse(true).
				ResponseValueRenderOption("FORMATTED_VALUE").Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			return t.appended(call, id, resp, in.Rows, marker)
		},
		Find: func(ctx context.Context, token, marker string, _ time.Time) (*model.SheetRange, error) {
			if !markers && in.UserEntered && formulas(in.Rows) {
				return nil, legate.Errorf(legate.CodeConflict, "google: an earlier attempt's answer was lost, and formulas cannot be found by their values: the rows may be in the sheet; look before appending them with a new call")
			}
			return t.findRows(ctx, call, token, id, in.Range, in.Rows, marker, markers)
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "appended " + rangeText(*out, "")}, nil
}

func formulas(rows [][]any) bool {
	for _, r := range rows {
		for _, v := range r {
			if s, ok := v.(string); ok && strings.HasPrefix(s, "=") {
				return true
			}
		}
	}
	return false
}

// appended is the result of an append: the rows as Google wrote them,
// the marker left out.
func (t Tools) appended(call *connectors.Call, id string, resp *sheets.AppendValuesResponse, sent [][]any, marker string) (*model.SheetRange, error) {
	if resp == nil || resp.Updates == nil || resp.Updates.UpdatedRange == "" {
		return nil, saas.Mapping("google", "an append answer without updates.updatedRange")
	}
	u := resp.Updates
	var rows [][]string
	if u.UpdatedData != nil && len(u.UpdatedData.Values) == len(sent) {
		var err error
		if rows, err = textRows(u.UpdatedData.Values); err != nil {
			return nil, err
		}
	} else if rows, _ = textRows(sent); rows == nil {
		rows = [][]string{{}}
	}
	width := 0
	for i := range rows {
		rows[i] = withoutMarker(rows[i], marker)
		width = max(width, len(sent[min(i, len(sent)-1)]))
	}
	// The range of the values, the marker's cells left out, as Find gives it.
	written := parseA1(u.UpdatedRange)
	rng := u.UpdatedRange
	if written.ok && written.row0 > 0 {
		rng = written.rowsRange(written.row0, written.row0+len(sent)-1, width)
	}
	out := t.sheetRange(call, id, rng, written.row0, rows)
	out.ProviderMetadata = map[string]any{"updated_cells": u.UpdatedCells}
	if resp.TableRange != "" {
		out.ProviderMetadata["table_range"] = resp.TableRange
	}
	return &out, nil
}

func withoutMarker(row []string, marker string) []string {
	if n := len(row); n > 0 && row[n-1] == marker {
		return row[:n-1]
	}
	return row
}

// findRows looks for the rows an attempt whose answer was lost appended
// to the table of rng: by their marker cell (markers on) or, off, as the
// table's last rows holding the values sent. Sheets keeps no time of a
// row, so it reads the whole sheet (every column: the marker lies right
// of the range's columns), from the end, where an append lands.
func (t Tools) findRows(ctx context.Context, call *connectors.Call, token, id, rng string, sent [][]any, marker string, markers bool) (*model.SheetRange, error) {
	a := parseA1(rng)
	width := 0
	for _, r := range sent {
		width = max(width, len(r))
	}
	read := rng // a name: a sheet's, read whole
	switch {
	case a.ok && a.sheet != "":
		read = a.sheet
	case a.ok: // cells of the first sheet: its columns from A to the marker's
		read = "A:" + columnName(columnNumber(a.firstColumn())+width)
	}
	api, err := t.api(ctx, token)
	if err != nil {
		return nil, err
	}
	vr, err := api.Spreadsheets.Values.Get(id, read).ValueRenderOption("FORMATTED_VALUE").Context(ctx).Do()
	if err != nil {
		return nil, gcore.MapError(ctx, err)
	}
	rows, err := textRows(vr.Values)
	if err != nil {
		return nil, err
	}
	want, _ := textRows(sent)
	skip := columnNumber(a.firstColumn()) - 1 // the cells left of the table
	values := func(row []string) []string {
		row = row[min(skip, len(row)):]
		if markers {
			if j := slices.Index(row, marker); j >= 0 {
				return row[:j]
			}
			return nil
		}
		for len(row) > 0 && row[len(row)-1] == "" {
			row = row[:len(row)-1]
		}
		return row
	}
	end := len(rows) // the found rows end here
	if markers {
		for end > 0 && values(rows[end-1]) == nil {
			end--
		}
	}
	start := end - len(want)
	if start < 0 {
		return nil, nil
	}
	found := make([][]string, len(want))
	for i := range want {
		got := values(rows[start+i])
		if got == nil || !slices.Equal(got, trimmed(want[i])) {
			return nil, nil
		}
		found[i] = got
	}
	first := 1
	if got := parseA1(vr.Range); got.ok {
		first = got.first()
	}
	at := a
	at.sheet = parseA1(vr.Range).sheet
	out := t.sheetRange(call, id, at.rowsRange(first+start, first+start+len(want)-1, width), first+start, found)
	out.ProviderMetadata = map[string]any{"found_after_lost_answer": true}
	return &out, nil
}

func trimmed(row []string) []string {
	for len(row) > 0 && row[len(row)-1] == "" {
		row = row[:len(row)-1]
	}
	return row
}
