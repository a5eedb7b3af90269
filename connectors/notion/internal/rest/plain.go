package rest

import (
	"reflect"
	"slices"
	"time"

	"github.com/jomei/notionapi"
)

// Plain is a property's value as plain JSON: text as a string, a select
// as its option's name, a relation as page refs, a date as its start (or
// start/end), people by name; nil for a type without a plain value.
func Plain(p notionapi.Property, pageRef func(id string) string) any {
	switch v := p.(type) {
	case *notionapi.TitleProperty:
		return TextOf(v.Title)
	case *notionapi.RichTextProperty:
		return TextOf(v.RichText)
	case *notionapi.TextProperty:
		return TextOf(v.Text)
	case *notionapi.NumberProperty:
		return v.Number
	case *notionapi.SelectProperty:
		return optionName(v.Select)
	case *notionapi.StatusProperty:
		return optionName(v.Status)
	case *notionapi.MultiSelectProperty:
		names := make([]string, 0, len(v.MultiSelect))
		for _, o := range v.MultiSelect {
			names = append(names, o.Name)
		}
		return names
	case *notionapi.DateProperty:
		return dateValue(v.Date)
	case *notionapi.CheckboxProperty:
		return v.Checkbox
	case *notionapi.URLProperty:
		return nonEmpty(v.URL)
	case *notionapi.EmailProperty:
		return nonEmpty(v.Email)
	case *notionapi.PhoneNumberProperty:
		return nonEmpty(v.PhoneNumber)
	case *notionapi.PeopleProperty:
		names := make([]string, 0, len(v.People))
		for _, u := range v.People {
			names = append(names, OrID(u.Name, string(u.ID)))
		}
		return names
	case *notionapi.RelationProperty:
		refs := make([]string, 0, len(v.Relation))
		for _, r := range v.Relation {
			refs = append(refs, pageRef(string(r.ID)))
		}
		return refs
	case *notionapi.CreatedTimeProperty:
		return v.CreatedTime.UTC().Format(time.RFC3339)
	case *notionapi.LastEditedTimeProperty:
		return v.LastEditedTime.UTC().Format(time.RFC3339)
	case *notionapi.CreatedByProperty:
		return v.CreatedBy.Name
	case *notionapi.LastEditedByProperty:
		return v.LastEditedBy.Name
	case *notionapi.UniqueIDProperty:
		return v.UniqueID.String()
	case *notionapi.FormulaProperty:
		switch v.Formula.Type {
		case notionapi.FormulaTypeString:
			return v.Formula.String
		case notionapi.FormulaTypeNumber:
			return v.Formula.Number
		case notionapi.FormulaTypeBoolean:
			return v.Formula.Boolean
		case notionapi.FormulaTypeDate:
			return dateValue(v.Formula.Date)
		}
	}
	return nil
}

func optionName(o notionapi.Option) any { return nonEmpty(o.Name) }

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// dateValue is a date's start, or start/end (ISO 8601's interval), nil
// for none.
func dateValue(d *notionapi.DateObject) any {
	if d == nil || d.Start == nil {
		return nil
	}
	s := d.Start.String()
	if d.End != nil {
		s += "/" + d.End.String()
	}
	return s
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
func Holds(current, sent notionapi.Properties) bool {
	id := func(id string) string { return id }
	for name, want := range sent {
		got, ok := current[name]
		if name == "title" {
			for _, p := range current {
				if p.GetType() == notionapi.PropertyTypeTitle {
					got, ok = p, true
				}
			}
		}
		if !ok {
			return false
		}
		if w, isPeople := want.(*notionapi.PeopleProperty); isPeople {
			g, _ := got.(*notionapi.PeopleProperty)
			if g == nil || !slices.EqualFunc(w.People, g.People, func(a, b notionapi.User) bool { return a.ID == b.ID }) {
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
