package google_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

func (s *standin) mountSheets(mux *http.ServeMux) {
	mux.HandleFunc("GET /v4/spreadsheets/{id}", s.wrap("tabs", s.tabs))
	mux.HandleFunc("PUT /v4/spreadsheets/{id}/values/{rng}", s.wrap("update", s.update))
	mux.HandleFunc("POST /v4/spreadsheets", s.wrap("create", s.createSheet))
}

// bookJSON is a spreadsheet's id, title and tabs, as Sheets answers
// fields=spreadsheetId,properties.title,sheets.properties.
func (s *standin) bookJSON(id string) map[string]any {
	var names []string
	for name := range s.sheets[id] {
		names = append(names, name)
	}
	slices.Sort(names)
	var tabs []map[string]any
	for i, name := range names {
		rows := len(s.sheets[id][name])
		tabs = append(tabs, map[string]any{"properties": map[string]any{"sheetId": i * 7, "title": name, "index": i, "sheetType": "GRID",
			"gridProperties": map[string]any{"rowCount": max(rows, 1000), "columnCount": 26}}})
	}
	title := id
	if f := s.fileAt(id); f != nil {
		title = f.Name
	}
	return map[string]any{"spreadsheetId": id, "properties": map[string]any{"title": title}, "sheets": tabs}
}

func (s *standin) tabs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sheets[r.PathValue("id")]; !ok {
		gerror(w, 404, "Requested entity was not found.", "notFound", "NOT_FOUND")
		return
	}
	json.NewEncoder(w).Encode(s.bookJSON(r.PathValue("id")))
}

func (s *standin) update(w http.ResponseWriter, r *http.Request) {
	win, _, ok := s.sheet(w, r, r.PathValue("rng"))
	if !ok {
		return
	}
	var body struct {
		Values [][]any `json:"values"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Values) == 0 {
		gerror(w, 400, "Invalid JSON payload received.", "badRequest", "INVALID_ARGUMENT")
		return
	}
	row0, col0 := max(win.row0, 1), max(win.col0, 1)
	s.mu.Lock()
	book := s.sheets[r.PathValue("id")]
	rows := book[win.sheet]
	width, cells := 0, 0
	out := make([][]string, len(body.Values))
	for i, vals := range body.Values {
		for len(rows) < row0+i {
			rows = append(rows, nil)
		}
		row := rows[row0+i-1]
		for len(row) < col0-1+len(vals) {
			row = append(row, nil)
		}
		for j, v := range vals {
			if v != nil {
				row[col0-1+j] = v
			}
			out[i] = append(out[i], formatted(row[col0-1+j]))
		}
		rows[row0+i-1] = row
		width, cells = max(width, len(vals)), cells+len(vals)
	}
	book[win.sheet] = rows
	s.writes["update"]++
	s.mu.Unlock()
	if s.afterWrite != nil && s.afterWrite("update", w, r) {
		return
	}
	rng := fmt.Sprintf("%s!%s%d:%s%d", win.sheet, colName(col0), row0, colName(col0+width-1), row0+len(body.Values)-1)
	json.NewEncoder(w).Encode(map[string]any{"spreadsheetId": r.PathValue("id"), "updatedRange": rng, "updatedRows": len(body.Values),
		"updatedColumns": width, "updatedCells": cells, "updatedData": map[string]any{"range": rng, "majorDimension": "ROWS", "values": out}})
}

func (s *standin) createSheet(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Properties struct{ Title string }
		Sheets     []struct{ Properties struct{ Title string } }
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Properties.Title == "" {
		gerror(w, 400, "Invalid JSON payload received.", "badRequest", "INVALID_ARGUMENT")
		return
	}
	s.mu.Lock()
	s.writes["create"]++
	id := fmt.Sprintf("sheet-new-%d", s.writes["create"])
	book := map[string][][]any{}
	for _, t := range in.Sheets {
		book[t.Properties.Title] = nil
	}
	if len(book) == 0 {
		book["Sheet1"] = nil
	}
	s.sheets[id] = book
	s.mu.Unlock()
	s.addFile(file{ID: id, Name: in.Properties.Title, MimeType: "application/vnd.google-apps.spreadsheet", CreatedTime: now(),
		Owners: []owner{{EmailAddress: "me@example.com", Me: true}}, Parents: []string{"root"}})
	if s.afterWrite != nil && s.afterWrite("create", w, r) {
		return
	}
	s.mu.Lock()
	out := s.bookJSON(id)
	s.mu.Unlock()
	json.NewEncoder(w).Encode(out)
}
