package notion

import (
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
)

// settable are the property types create_page and update_page set from
// plain values.
const settable = "title, rich_text, number, select, status, multi_select, date, checkbox, url, email, phone_number, people, relation"

// properties converts the plain values of a page's properties to
// Notion's, by the types of its data source's properties (types, by
// name). titleArg, when not empty, names the argument that sets the
// title instead. Every problem is INVALID_ARGUMENT naming the property;
// a relation's page ref of another tenant or instance is NOT_FOUND.
func (c *Connector) properties(call *connectors.Call, types map[string]string, values map[string]any, titleArg string) (notionapi.Properties, error) {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names) // the first problem reported is always the same
	out := notionapi.Properties{}
	for _, name := range names {
		typ, ok := types[name]
		if !ok {
			known := make([]string, 0, len(types))
			for n := range types {
				known = append(known, n)
			}
			sort.Strings(known)
			return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: properties: the database has no property %q; it has %s", name, strings.Join(known, ", "))
		}
		if typ == "title" && titleArg != "" {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: properties.%s: the title is set by the %s argument", name, titleArg)
		}
		p, err := c.property(call, typ, values[name])
		if err != nil {
			if le := (*legate.Error)(nil); errors.As(err, &le) && le.Code == legate.CodeInvalidArgument {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: properties.%s: %s", name, le.Message)
			}
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

// property is the Notion value of a property of type typ given as v.
func (c *Connector) property(call *connectors.Call, typ string, v any) (notionapi.Property, error) {
	bad := func(want string) error {
		return legate.Errorf(legate.CodeInvalidArgument, "a %s property takes %s", typ, want)
	}
	s, isString := v.(string)
	switch typ {
	case "title", "rich_text", "select", "status", "url", "email", "phone_number":
		if !isString {
			return nil, bad("a string")
		}
	}
	switch typ {
	case "title":
		return &notionapi.TitleProperty{Title: richText(s)}, nil
	case "rich_text":
		return &notionapi.RichTextProperty{RichText: richText(s)}, nil
	case "select":
		return &notionapi.SelectProperty{Select: notionapi.Option{Name: s}}, nil
	case "status":
		return &notionapi.StatusProperty{Status: notionapi.Option{Name: s}}, nil
	case "url":
		return &notionapi.URLProperty{URL: s}, nil
	case "email":
		return &notionapi.EmailProperty{Email: s}, nil
	case "phone_number":
		return &notionapi.PhoneNumberProperty{PhoneNumber: s}, nil
	case "number":
		n, ok := v.(float64)
		if !ok {
			return nil, bad("a number")
		}
		return &notionapi.NumberProperty{Number: n}, nil
	case "checkbox":
		b, ok := v.(bool)
		if !ok {
			return nil, bad("true or false")
		}
		return &notionapi.CheckboxProperty{Checkbox: b}, nil
	case "multi_select":
		names, ok := stringList(v)
		if !ok {
			return nil, bad("a list of option names")
		}
		opts := make([]notionapi.Option, len(names))
		for i, n := range names {
			opts[i] = notionapi.Option{Name: n}
		}
		return &notionapi.MultiSelectProperty{MultiSelect: opts}, nil
	case "date":
		d, ok := dateObject(v)
		if !ok {
			return nil, bad("a date, YYYY-MM-DD or RFC 3339, or start/end")
		}
		return &notionapi.DateProperty{Date: d}, nil
	case "relation":
		refs, ok := stringList(v)
		if !ok {
			return nil, bad("a list of page refs or ids")
		}
		rel := make([]notionapi.Relation, len(refs))
		for i, ref := range refs {
			_, id, err := c.resolve(call, "relation", ref, kindPage)
			if err != nil {
				return nil, err
			}
			rel[i] = notionapi.Relation{ID: notionapi.PageID(id)}
		}
		return &notionapi.RelationProperty{Relation: rel}, nil
	case "people":
		refs, ok := stringList(v)
		if !ok {
			return nil, bad("a list of user refs or ids, from list_users")
		}
		users := make([]notionapi.User, len(refs))
		for i, ref := range refs {
			_, id, err := c.resolve(call, "people", ref, kindUser)
			if err != nil {
				return nil, err
			}
			users[i] = notionapi.User{Object: notionapi.ObjectTypeUser, ID: notionapi.UserID(id)}
		}
		return &notionapi.PeopleProperty{People: users}, nil
	}
	return nil, legate.Errorf(legate.CodeInvalidArgument, "a %s property cannot be set here; these can: %s", typ, settable)
}

// stringList is v as a list of strings, from JSON.
func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, e := range list {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// dateObject reads a date, or start/end: each YYYY-MM-DD (the start of
// that day in UTC) or RFC 3339.
func dateObject(v any) (*notionapi.DateObject, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	start, end, ranged := strings.Cut(s, "/")
	parse := func(s string) (*notionapi.Date, bool) {
		for _, layout := range []string{time.DateOnly, time.RFC3339} {
			if t, err := time.Parse(layout, s); err == nil {
				d := notionapi.Date(t)
				return &d, true
			}
		}
		return nil, false
	}
	d := &notionapi.DateObject{}
	if d.Start, ok = parse(start); !ok {
		return nil, false
	}
	if ranged {
		if d.End, ok = parse(end); !ok {
			return nil, false
		}
	}
	return d, true
}

// richText is text as notionapi's rich-text runs of at most md.MaxRun
// characters.
func richText(text string) []notionapi.RichText {
	out := []notionapi.RichText{}
	for _, r := range md.PlainRuns(text) {
		out = append(out, notionapi.RichText{Type: notionapi.ObjectTypeText, Text: &notionapi.Text{Content: r.Text.Content}})
	}
	return out
}
