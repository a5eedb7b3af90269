package rest

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate/connectors/notion/internal/md"
)

// Values are a page's property values, by property name.
type Values map[string]Value

// Value is a page's property value: its type, and the field of that
// type's name. The types without a plain value (files, rollups, buttons,
// verification) keep only their type.
type Value struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	Title       []md.Run  `json:"title"`
	RichText    []md.Run  `json:"rich_text"`
	Text        []md.Run  `json:"text"`
	Number      float64   `json:"number"`
	Select      *Option   `json:"select"`
	Status      *Option   `json:"status"`
	MultiSelect []Option  `json:"multi_select"`
	Date        *Date     `json:"date"`
	Checkbox    bool      `json:"checkbox"`
	URL         string    `json:"url"`
	Email       string    `json:"email"`
	PhoneNumber string    `json:"phone_number"`
	People      []User    `json:"people"`
	Relation    []IDOnly  `json:"relation"`
	CreatedTime time.Time `json:"created_time"`
	EditedTime  time.Time `json:"last_edited_time"`
	CreatedBy   User      `json:"created_by"`
	EditedBy    User      `json:"last_edited_by"`
	UniqueID    *struct {
		Prefix *string `json:"prefix"`
		Number int     `json:"number"`
	} `json:"unique_id"`
	Formula *struct {
		Type    string  `json:"type"`
		String  string  `json:"string"`
		Number  float64 `json:"number"`
		Boolean bool    `json:"boolean"`
		Date    *Date   `json:"date"`
	} `json:"formula"`
}

// Option is a select or status option.
type Option struct {
	Name string `json:"name"`
}

// IDOnly is an object named by its id alone (a relation's page).
type IDOnly struct {
	ID string `json:"id"`
}

// Date is a date property's value: its start and optional end, each a
// date or a date-time.
type Date struct {
	Start string  `json:"start"`
	End   *string `json:"end"`
}

// Plain is a property's value as plain JSON: text as a string, a select
// as its option's name, a relation as page refs, a date as its start (or
// start/end), people by name; nil for a type without a plain value.
func Plain(v Value, pageRef func(id string) string) any {
	switch v.Type {
	case "title":
		return md.Plain(v.Title)
	case "rich_text":
		return md.Plain(v.RichText)
	case "text":
		return md.Plain(v.Text)
	case "number":
		return v.Number
	case "select":
		return optionName(v.Select)
	case "status":
		return optionName(v.Status)
	case "multi_select":
		names := make([]string, 0, len(v.MultiSelect))
		for _, o := range v.MultiSelect {
			names = append(names, o.Name)
		}
		return names
	case "date":
		return dateValue(v.Date)
	case "checkbox":
		return v.Checkbox
	case "url":
		return nonEmpty(v.URL)
	case "email":
		return nonEmpty(v.Email)
	case "phone_number":
		return nonEmpty(v.PhoneNumber)
	case "people":
		names := make([]string, 0, len(v.People))
		for _, u := range v.People {
			names = append(names, OrID(u.Name, u.ID))
		}
		return names
	case "relation":
		refs := make([]string, 0, len(v.Relation))
		for _, r := range v.Relation {
			refs = append(refs, pageRef(r.ID))
		}
		return refs
	case "created_time":
		return v.CreatedTime.UTC().Format(time.RFC3339)
	case "last_edited_time":
		return v.EditedTime.UTC().Format(time.RFC3339)
	case "created_by":
		return v.CreatedBy.Name
	case "last_edited_by":
		return v.EditedBy.Name
	case "unique_id":
		if v.UniqueID == nil {
			return nil
		}
		if v.UniqueID.Prefix != nil {
			return *v.UniqueID.Prefix + "-" + strconv.Itoa(v.UniqueID.Number)
		}
		return strconv.Itoa(v.UniqueID.Number)
	case "formula":
		if v.Formula == nil {
			return nil
		}
		switch v.Formula.Type {
		case "string":
			return v.Formula.String
		case "number":
			return v.Formula.Number
		case "boolean":
			return v.Formula.Boolean
		case "date":
			return dateValue(v.Formula.Date)
		}
	}
	return nil
}

func optionName(o *Option) any {
	if o == nil {
		return nil
	}
	return nonEmpty(o.Name)
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// dateValue is a date's start, or start/end (ISO 8601's interval), nil
// for none; each in RFC 3339, a date alone at midnight UTC.
func dateValue(d *Date) any {
	if d == nil || d.Start == "" {
		return nil
	}
	s := dateTime(d.Start)
	if d.End != nil && *d.End != "" {
		s += "/" + dateTime(*d.End)
	}
	return s
}

// dateTime is a date or date-time of Notion's in RFC 3339 (as the
// values written are), or as given when it is neither.
func dateTime(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return s
		}
	}
	return t.Format(time.RFC3339)
}

// OrID is name, or id when the name is unknown (a user the integration
// cannot read).
func OrID(name, id string) string {
	if name == "" {
		return id
	}
	return name
}

// Holds reports whether a page's properties (current) hold the values
// sent: each property sent, by name ("title" for the title, whatever its
// name), has the same plain value; people are compared by id.
func Holds(current Values, sent notionapi.Properties) bool {
	id := func(id string) string { return id }
	for name, prop := range sent {
		got, ok := current[name]
		if name == "title" {
			for _, p := range current {
				if p.Type == "title" {
					got, ok = p, true
				}
			}
		}
		if !ok {
			return false
		}
		// What was sent, read as a page's value of the current type.
		raw, err := json.Marshal(prop)
		var want Value
		if err != nil || json.Unmarshal(raw, &want) != nil {
			return false
		}
		want.Type = got.Type
		if got.Type == "people" {
			if !slices.EqualFunc(want.People, got.People, func(a, b User) bool { return a.ID == b.ID }) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(Plain(want, id), Plain(got, id)) {
			return false
		}
	}
	return true
}
