package sheets

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

func (t Tools) rangeArg(r string) error {
	switch {
	case strings.TrimSpace(r) == "":
		return legate.Errorf(legate.CodeInvalidArgument, "google: range: must not be empty")
	case len(r) > MaxRangeBytes:
		return legate.Errorf(legate.CodeInvalidArgument, "google: range: at most %d bytes, got %d", MaxRangeBytes, len(r))
	}
	return nil
}

// readRange reads a page of a range. A range in A1 notation is read a
// window of rows at a time, one row more than the page to tell whether
// more follow; a name (a sheet's alone, a named range) is read whole and
// the page cut from it. The cursor holds the offset of the next page's
// first row, bound to the spreadsheet and the range.
func (t Tools) readRange(ctx context.Context, call *connectors.Call, in *readRangeIn) (*legate.Result, error) {
	id, err := t.Core.FileID(call, in.Spreadsheet, in.SpreadsheetID, "spreadsheet", "spreadsheet_id")
	if err != nil {
		return nil, err
	}
	if err := t.rangeArg(in.Range); err != nil {
		return nil, err
	}
	p, err := t.Core.Kit.Open(call, in.Page, DefaultRows, MaxRows)
	if err != nil {
		return nil, err
	}
	bound := id + "\n" + in.Range
	offset := 0
	if p.Token != "" {
		off, forRange, ok := strings.Cut(p.Token, "\n")
		n, err := strconv.Atoi(off)
		if !ok || err != nil || n < 0 || forRange != bound {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: cursor: it continues another range; give the same spreadsheet and range")
		}
		offset = n
	}
	a := parseA1(in.Range)
	request, first := in.Range, 0
	if a.ok {
		var more bool
		request, first, more = a.window(offset, p.Size+1)
		if !more {
			out := rangePage{SheetRange: t.sheetRange(call, id, in.Range, 0, nil)}
			return &legate.Result{Structured: out, Text: rangeText(out.SheetRange, "")}, nil
		}
	}
	var out rangePage
	err = t.Core.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := t.api(ctx, token)
		if err != nil {
			return err
		}
		vr, err := api.Spreadsheets.Values.Get(id, request).ValueRenderOption("FORMATTED_VALUE").Context(ctx).Do()
		if err != nil {
			return gcore.MapError(ctx, err)
		}
		rows, err := textRows(vr.Values)
		if err != nil {
			return err
		}
		if !a.ok { // read whole: the page is cut here
			rows = rows[min(offset, len(rows)):]
		}
		more := len(rows) > p.Size
		rows = rows[:min(len(rows), p.Size)]
		shown := vr.Range
		if a.ok && len(rows) > 0 {
			shown = a.cells(first, first+len(rows)-1)
		}
		out = rangePage{SheetRange: t.sheetRange(call, id, shown, first, rows)}
		if more {
			out.NextCursor = t.Core.Kit.Cursor(call, strconv.Itoa(offset+p.Size)+"\n"+bound)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: rangeText(out.SheetRange, out.NextCursor)}, nil
}

func (t Tools) sheetRange(call *connectors.Call, id, rng string, first int, rows [][]string) model.SheetRange {
	if rows == nil {
		rows = [][]string{}
	}
	out := model.SheetRange{Object: t.Core.Kit.Object(call, model.SheetRangeV1, gcore.KindFile, id), Range: rng, Rows: rows}
	out.URL = spreadsheetURL(id)
	if len(rows) > 0 {
		out.FirstRow = first
	}
	return out
}

// textRows are Sheets' values as text: formatted values are strings
// already; a number or a boolean (another render option) is written as
// the sheet would.
func textRows(values [][]any) ([][]string, error) {
	n := 0
	for _, row := range values {
		n += len(row)
	}
	cells := make([]string, n) // one allocation for every row
	rows := make([][]string, len(values))
	for i, row := range values {
		rows[i], cells = cells[:len(row):len(row)], cells[len(row):]
		for j, v := range row {
			switch v := v.(type) {
			case string:
				rows[i][j] = v
			case float64:
				rows[i][j] = strconv.FormatFloat(v, 'f', -1, 64)
			case bool:
				rows[i][j] = strings.ToUpper(strconv.FormatBool(v))
			case nil:
			default:
				return nil, saas.Mapping("google", "a cell of type %T", v)
			}
		}
	}
	return rows, nil
}

func (t Tools) appendRow(ctx context.Context, call *connectors.Call, in *appendRowIn) (*legate.Result, error) {
	id, err := t.Core.FileID(call, in.Spreadsheet, in.SpreadsheetID, "spreadsheet", "spreadsheet_id")
	if err != nil {
		return nil, err
	}
	if err := t.rangeArg(in.Range); err != nil {
		return nil, err
	}
	if len(in.Values) == 0 || len(in.Values) > MaxCells {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: values: between 1 and %d cells, got %d", MaxCells, len(in.Values))
	}
	for i, v := range in.Values {
		switch v := v.(type) {
		case string:
			if len(v) > MaxCellBytes {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "google: values[%d]: at most %d bytes", i, MaxCellBytes)
			}
		case float64, bool, nil:
		default:
			return nil, legate.Errorf(legate.CodeInvalidArgument, "google: values[%d]: a string, a number, a boolean or null, got %T", i, v)
		}
	}
	input := "RAW"
	if in.UserEntered {
		input = "USER_ENTERED"
	}
	out, err := saas.WriteOnce(ctx, t.Core.Kit, call, saas.Write[model.SheetRange]{
		Send: func(ctx context.Context, token, marker string) (*model.SheetRange, error) {
			row := in.Values
			if t.Core.Kit.Markers() {
				row = append(append(make([]any, 0, len(row)+1), row...), marker)
			}
			api, err := t.api(ctx, token)
			if err != nil {
				return nil, err
			}
			resp, err := api.Spreadsheets.Values.Append(id, in.Range, &sheets.ValueRange{Values: [][]any{row}}).
				ValueInputOption(input).InsertDataOption("INSERT_ROWS").IncludeValuesInResponse(true).
				ResponseValueRenderOption("FORMATTED_VALUE").Context(ctx).Do()
			if err != nil {
				return nil, gcore.MapError(ctx, err)
			}
			return t.appended(call, id, resp, in.Values, marker)
		},
		Find: func(ctx context.Context, token, marker string, _ time.Time) (*model.SheetRange, error) {
			if !t.Core.Kit.Markers() {
				return nil, legate.Errorf(legate.CodeConflict, "google: an earlier attempt's answer was lost and rows carry no operation marker (operation_marker is off): the row may be in the sheet; look before appending it with a new call")
			}
			return t.findRow(ctx, call, token, id, in.Range, len(in.Values), marker)
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "appended " + rangeText(*out, "")}, nil
}

// appended is the result of an append: the row as Google wrote it, the
// marker left out.
func (t Tools) appended(call *connectors.Call, id string, resp *sheets.AppendValuesResponse, sent []any, marker string) (*model.SheetRange, error) {
	if resp == nil || resp.Updates == nil || resp.Updates.UpdatedRange == "" {
		return nil, saas.Mapping("google", "an append answer without updates.updatedRange")
	}
	u := resp.Updates
	var rows [][]string
	if u.UpdatedData != nil && len(u.UpdatedData.Values) == 1 {
		var err error
		if rows, err = textRows(u.UpdatedData.Values); err != nil {
			return nil, err
		}
	} else if rows, _ = textRows([][]any{sent}); rows == nil {
		rows = [][]string{{}}
	}
	rows[0] = withoutMarker(rows[0], marker)
	// The range of the values, the marker's cell left out, as Find gives it.
	written := parseA1(u.UpdatedRange)
	rng := u.UpdatedRange
	if t.Core.Kit.Markers() && written.ok && written.row0 > 0 {
		rng = written.rowRange(written.row0, len(sent))
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

// findRow looks for the row carrying marker in a cell, after width
// values: the row an attempt whose answer was lost appended to the table
// of rng. Sheets keeps no time of a row, so it reads the whole sheet
// (every column: the marker lies right of the range's columns), from the
// end, where an append lands.
func (t Tools) findRow(ctx context.Context, call *connectors.Call, token, id, rng string, width int, marker string) (*model.SheetRange, error) {
	a := parseA1(rng)
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
	skip := columnNumber(a.firstColumn()) - 1 // the cells left of the table
	for i := len(rows) - 1; i >= 0; i-- {
		j := len(rows[i]) - 1
		for j >= 0 && rows[i][j] != marker {
			j--
		}
		if j < 0 {
			continue
		}
		first := 1
		if got := parseA1(vr.Range); got.ok {
			first = got.first()
		}
		values := rows[i][min(skip, j):j]
		found := a
		found.sheet = parseA1(vr.Range).sheet
		out := t.sheetRange(call, id, found.rowRange(first+i, len(values)), first+i, [][]string{values})
		out.ProviderMetadata = map[string]any{"found_after_lost_answer": true}
		return &out, nil
	}
	return nil, nil
}

// rangeText is a range in a few lines: its name and rows, tab-separated.
func rangeText(r model.SheetRange, next string) string {
	size := len(r.Range) + 48
	for _, row := range r.Rows {
		for _, cell := range row {
			size += len(cell) + 1
		}
		size++
	}
	var b strings.Builder
	b.Grow(size)
	fmt.Fprintf(&b, "%s: %d row(s)", r.Range, len(r.Rows))
	for _, row := range r.Rows {
		for i, cell := range row {
			if i == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte('\t')
			}
			b.WriteString(cell)
		}
		if len(row) == 0 {
			b.WriteByte('\n')
		}
	}
	if next != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return b.String()
}
