package rest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/jomei/notionapi"
)

// A page of every property type, as Notion answers it.
const everyType = `{"object":"page","id":"p1","created_time":"2025-01-02T03:04:05.000Z","last_edited_time":"2025-01-03T00:00:00.000Z",
"created_by":{"object":"user","id":"u1"},"parent":{"type":"data_source_id","data_source_id":"ds1"},"url":"https://www.notion.so/p1","in_trash":false,
"properties":{
 "Name":{"id":"title","type":"title","title":[{"type":"text","text":{"content":"Plan "},"plain_text":"Plan "},{"type":"text","text":{"content":"B"}}]},
 "Notes":{"id":"a","type":"rich_text","rich_text":[{"type":"text","text":{"content":"n"},"plain_text":"n"}]},
 "Score":{"id":"b","type":"number","number":4.5},
 "Empty score":{"id":"b2","type":"number","number":null},
 "Stage":{"id":"c","type":"select","select":{"id":"o1","name":"Doing","color":"red"}},
 "No stage":{"id":"c2","type":"select","select":null},
 "State":{"id":"d","type":"status","status":{"name":"Done"}},
 "Tags":{"id":"e","type":"multi_select","multi_select":[{"name":"x"},{"name":"y"}]},
 "Due":{"id":"f","type":"date","date":{"start":"2025-02-01","end":null,"time_zone":null}},
 "Window":{"id":"g","type":"date","date":{"start":"2025-02-01T09:30:00.000+02:00","end":"2025-02-02"}},
 "No date":{"id":"g2","type":"date","date":null},
 "Done":{"id":"h","type":"checkbox","checkbox":true},
 "Link":{"id":"i","type":"url","url":"https://example.com"},
 "No link":{"id":"i2","type":"url","url":null},
 "Mail":{"id":"j","type":"email","email":"a@example.com"},
 "Phone":{"id":"k","type":"phone_number","phone_number":"+331"},
 "Owner":{"id":"l","type":"people","people":[{"object":"user","id":"u1","name":"Ada"},{"object":"user","id":"u2"}]},
 "Related":{"id":"m","type":"relation","relation":[{"id":"p2"},{"id":"p3"}],"has_more":false},
 "Created":{"id":"n","type":"created_time","created_time":"2025-01-02T03:04:05.000Z"},
 "Edited":{"id":"o","type":"last_edited_time","last_edited_time":"2025-01-03T00:00:00.000+01:00"},
 "Author":{"id":"q","type":"created_by","created_by":{"object":"user","id":"u1","name":"Ada"}},
 "Editor":{"id":"r","type":"last_edited_by","last_edited_by":{"object":"user","id":"u2","name":"Bob"}},
 "Ticket":{"id":"s","type":"unique_id","unique_id":{"prefix":"ENG","number":42}},
 "Seq":{"id":"s2","type":"unique_id","unique_id":{"prefix":null,"number":7}},
 "F1":{"id":"t","type":"formula","formula":{"type":"string","string":"s"}},
 "F2":{"id":"u","type":"formula","formula":{"type":"number","number":3}},
 "F3":{"id":"v","type":"formula","formula":{"type":"boolean","boolean":true}},
 "F4":{"id":"w","type":"formula","formula":{"type":"date","date":{"start":"2025-03-01"}}},
 "Files":{"id":"x","type":"files","files":[{"name":"a.pdf","type":"external","external":{"url":"https://e/a.pdf"}}]},
 "Roll":{"id":"y","type":"rollup","rollup":{"type":"number","number":1,"function":"sum"}}
}}`

// Every property type reads to its plain value in one pass.
func TestPlainOfEveryType(t *testing.T) {
	var pg Page
	if err := json.Unmarshal([]byte(everyType), &pg); err != nil {
		t.Fatal(err)
	}
	ref := func(id string) string { return "ref:" + id }
	got := map[string]any{}
	for name, v := range pg.Properties {
		got[name] = Plain(v, ref)
	}
	want := map[string]any{
		"Name": "Plan B", "Notes": "n", "Score": 4.5, "Empty score": 0.0, "Stage": "Doing", "No stage": nil, "State": "Done",
		"Tags": []string{"x", "y"}, "Due": "2025-02-01T00:00:00Z", "Window": "2025-02-01T09:30:00+02:00/2025-02-02T00:00:00Z",
		"No date": nil, "Done": true, "Link": "https://example.com", "No link": nil, "Mail": "a@example.com", "Phone": "+331",
		"Owner": []string{"Ada", "u2"}, "Related": []string{"ref:p2", "ref:p3"}, "Created": "2025-01-02T03:04:05Z",
		"Edited": "2025-01-02T23:00:00Z", "Author": "Ada", "Editor": "Bob", "Ticket": "ENG-42", "Seq": "7",
		"F1": "s", "F2": 3.0, "F3": true, "F4": "2025-03-01T00:00:00Z", "Files": nil, "Roll": nil,
	}
	for name, w := range want {
		if !reflect.DeepEqual(got[name], w) {
			t.Errorf("%s: got %#v, want %#v", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d properties read, want %d", len(got), len(want))
	}
	if Title(pg.Properties) != "Plan B" || pg.CreatedBy.ID != "u1" || pg.Parent.DataSourceID != "ds1" {
		t.Errorf("title %q, created by %q, parent %+v", Title(pg.Properties), pg.CreatedBy.ID, pg.Parent)
	}
}

// What a write sends (notionapi's types) is found in the page read back,
// whatever the title property's name; a value that differs is not.
func TestHoldsComparesWhatWasSent(t *testing.T) {
	var pg Page
	if err := json.Unmarshal([]byte(everyType), &pg); err != nil {
		t.Fatal(err)
	}
	start := notionapi.Date(mustTime(t, "2025-02-01"))
	sent := notionapi.Properties{
		"title": &notionapi.TitleProperty{Title: []notionapi.RichText{{Text: &notionapi.Text{Content: "Plan B"}}}},
		"Stage": &notionapi.SelectProperty{Select: notionapi.Option{Name: "Doing"}},
		"Tags":  &notionapi.MultiSelectProperty{MultiSelect: []notionapi.Option{{Name: "x"}, {Name: "y"}}},
		"Due":   &notionapi.DateProperty{Date: &notionapi.DateObject{Start: &start}},
		"Owner": &notionapi.PeopleProperty{People: []notionapi.User{{ID: "u1"}, {ID: "u2"}}},
		"Score": &notionapi.NumberProperty{Number: 4.5},
		"Done":  &notionapi.CheckboxProperty{Checkbox: true},
	}
	if !Holds(pg.Properties, sent) {
		t.Fatal("the values sent are not found in the page holding them")
	}
	for name, other := range map[string]notionapi.Property{
		"Stage": &notionapi.SelectProperty{Select: notionapi.Option{Name: "Todo"}},
		"Owner": &notionapi.PeopleProperty{People: []notionapi.User{{ID: "u1"}}},
		"Score": &notionapi.NumberProperty{Number: 5},
		"Gone":  &notionapi.CheckboxProperty{Checkbox: true},
	} {
		if Holds(pg.Properties, notionapi.Properties{name: other}) {
			t.Errorf("%s: another value is found as if written", name)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	tm, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
