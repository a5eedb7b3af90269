package notion_test

// The stand-in's data sources: their schema, their databases, and
// queries in Notion's filter and sort language.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// queryFilter is the part of Notion's filter language the stand-in
// knows: and, or, a title or rich_text's contains and equals, a select's
// or status's equals and does_not_equal, a checkbox's equals, a date's
// before and on_or_after, and created_time and last_edited_time's
// on_or_after.
type queryFilter struct {
	And      []queryFilter `json:"and"`
	Or       []queryFilter `json:"or"`
	Property string        `json:"property"`
	Title    *textCond     `json:"title"`
	RichText *textCond     `json:"rich_text"`
	Select   *optionCond   `json:"select"`
	Status   *optionCond   `json:"status"`
	Checkbox *struct {
		Equals bool `json:"equals"`
	} `json:"checkbox"`
	Date      *dateCond `json:"date"`
	Timestamp string    `json:"timestamp"`
	Created   *dateCond `json:"created_time"`
	Edited    *dateCond `json:"last_edited_time"`
}

type textCond struct {
	Contains string  `json:"contains"`
	Equals   *string `json:"equals"`
}

type optionCond struct {
	Equals       *string `json:"equals"`
	DoesNotEqual *string `json:"does_not_equal"`
}

type dateCond struct {
	OnOrAfter string `json:"on_or_after"`
	Before    string `json:"before"`
}

func (d *dateCond) match(t time.Time) bool {
	if d == nil {
		return true
	}
	if b, err := time.Parse(time.RFC3339, d.OnOrAfter); d.OnOrAfter != "" && (err != nil || t.Before(b)) {
		return false
	}
	if b, err := time.Parse(time.RFC3339, d.Before); d.Before != "" && (err != nil || !t.Before(b)) {
		return false
	}
	return true
}

// value is a page's property as the stand-in stores it: the object under
// its type.
func (p *page) value(name string) any {
	if name == "title" || name == p.databaseTitleKey {
		return p.title
	}
	prop, _ := p.props[name].(map[string]any)
	if prop == nil {
		return nil
	}
	return prop[prop["type"].(string)]
}

func optionName(v any) string {
	m, _ := v.(map[string]any)
	name, _ := m["name"].(string)
	return name
}

func (f *queryFilter) match(p *page) bool {
	for _, sub := range f.And {
		if !sub.match(p) {
			return false
		}
	}
	if len(f.Or) > 0 && !slices.ContainsFunc(f.Or, func(sub queryFilter) bool { return sub.match(p) }) {
		return false
	}
	for _, tc := range []*textCond{f.Title, f.RichText} {
		if tc == nil {
			continue
		}
		text := fmt.Sprint(p.value(f.Property))
		if rt, ok := p.value(f.Property).([]any); ok {
			text = ""
			for _, run := range rt {
				text += run.(map[string]any)["plain_text"].(string)
			}
		}
		if !strings.Contains(text, tc.Contains) || (tc.Equals != nil && text != *tc.Equals) {
			return false
		}
	}
	for _, oc := range []*optionCond{f.Select, f.Status} {
		if oc == nil {
			continue
		}
		name := optionName(p.value(f.Property))
		if (oc.Equals != nil && name != *oc.Equals) || (oc.DoesNotEqual != nil && name == *oc.DoesNotEqual) {
			return false
		}
	}
	if f.Checkbox != nil && p.value(f.Property) != f.Checkbox.Equals {
		return false
	}
	if f.Date != nil {
		start, _ := time.Parse(time.RFC3339, dateStart(p.value(f.Property)))
		if !f.Date.match(start) {
			return false
		}
	}
	return f.Created.match(p.created) && f.Edited.match(p.edited)
}

// dateStart is a date property's start, as RFC 3339.
func dateStart(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["start"].(string)
	if len(s) == len(time.DateOnly) {
		s += "T00:00:00Z"
	}
	return s
}

type sortSpec struct {
	Property  string `json:"property"`
	Timestamp string `json:"timestamp"`
	Direction string `json:"direction"`
}

// compare orders a and b by the sorts, in turn.
func compare(sorts []sortSpec, a, b *page) int {
	for _, s := range sorts {
		var c int
		switch {
		case s.Timestamp == "created_time":
			c = cmp.Compare(a.seq, b.seq) // creation order: seq
		case s.Timestamp == "last_edited_time":
			c = cmp.Compare(a.seq, b.seq)
		default:
			c = cmp.Compare(sortKey(a.value(s.Property)), sortKey(b.value(s.Property)))
		}
		if s.Direction == "descending" {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortKey is a value as the stand-in sorts it: a date by its start (none
// last), text as itself.
func sortKey(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if d := dateStart(v); d != "" {
		return d
	}
	return "~" // empty values last
}

func (s *standin) query(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Filter      *queryFilter `json:"filter"`
		Sorts       []sortSpec   `json:"sorts"`
		StartCursor string       `json:"start_cursor"`
		PageSize    int          `json:"page_size"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, 400, "validation_error", "body failed validation: "+err.Error())
		return
	}
	s.mu.Lock()
	if _, ok := s.databases[r.PathValue("id")]; !ok {
		s.mu.Unlock()
		fail(w, 404, "object_not_found", "Could not find data_source with ID: "+r.PathValue("id")+". Make sure the relevant pages and databases are shared with your integration.")
		return
	}
	var rows []*page
	for _, p := range s.pages {
		if p.parentID == r.PathValue("id") && !p.inTrash && (req.Filter == nil || req.Filter.match(p)) {
			rows = append(rows, p)
		}
	}
	slices.SortFunc(rows, func(a, b *page) int { return compare(req.Sorts, a, b) })
	all, ids := make([]any, len(rows)), make([]string, len(rows))
	for i, p := range rows {
		all[i], ids[i] = s.pageJSON(p), p.id
	}
	s.mu.Unlock()
	paginate(w, "page_or_data_source", all, ids, req.StartCursor, req.PageSize)
}

func (s *standin) getDataSource(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d, ok := s.databases[r.PathValue("id")]
	var out map[string]any
	if ok {
		out = s.dataSourceJSON(d)
	}
	s.mu.Unlock()
	if !ok {
		fail(w, 404, "object_not_found", "Could not find data_source with ID: "+r.PathValue("id")+".")
		return
	}
	json.NewEncoder(w).Encode(out)
}

func (s *standin) getDatabase(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	_, ok := s.holders[r.PathValue("id")]
	var out map[string]any
	if ok {
		out = s.databaseJSON(r.PathValue("id"))
	}
	s.mu.Unlock()
	if !ok {
		fail(w, 404, "object_not_found", "Could not find database with ID: "+r.PathValue("id")+".")
		return
	}
	json.NewEncoder(w).Encode(out)
}
