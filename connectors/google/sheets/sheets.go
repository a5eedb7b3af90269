package sheets

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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
