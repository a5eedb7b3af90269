package notion

import (
	"time"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// parentRef is the ref of a Notion parent, "" for the workspace.
func (c *Connector) parentRef(call *connectors.Call, p rest.Parent) string {
	switch {
	case p.DataSourceID != "":
		return c.kit.Ref(call, kindDataSource, p.DataSourceID)
	case p.DatabaseID != "":
		return c.kit.Ref(call, kindDatabase, p.DatabaseID)
	case p.PageID != "":
		return c.kit.Ref(call, kindPage, p.PageID)
	case p.BlockID != "":
		return c.kit.Ref(call, kindBlock, p.BlockID)
	}
	return ""
}

// pageOf converts a page to page.v1.
func (c *Connector) pageOf(call *connectors.Call, p *rest.Page) (model.Page, error) {
	if p == nil || p.ID == "" {
		return model.Page{}, saas.Mapping("notion", "a page without an id")
	}
	out := model.Page{
		Object:    c.kit.Object(call, model.PageV1, kindPage, string(p.ID)),
		Title:     rest.Title(p.Properties),
		ParentRef: c.parentRef(call, p.Parent),
		CreatedAt: utc(p.CreatedTime),
		UpdatedAt: utc(p.LastEditedTime),
	}
	out.URL = p.URL
	if len(p.Properties) > 0 {
		out.Properties = make(map[string]any, len(p.Properties))
		for name, prop := range p.Properties {
			out.Properties[name] = c.plain(call, prop)
		}
	}
	meta := map[string]any{"parent_type": p.Parent.Type}
	if p.InTrash || p.Archived {
		meta["in_trash"] = true
	}
	if p.PublicURL != "" {
		meta["public_url"] = p.PublicURL
	}
	if p.CreatedBy.ID != "" {
		meta["created_by"] = string(p.CreatedBy.ID)
	}
	out.ProviderMetadata = meta
	return out, nil
}

// databaseOf converts a data source to database.v1: its ref is the data
// source's, and provider_metadata names the database holding it.
func (c *Connector) databaseOf(call *connectors.Call, d *rest.DataSource) (model.Database, error) {
	if d == nil || d.ID == "" {
		return model.Database{}, saas.Mapping("notion", "a data source without an id")
	}
	out := model.Database{
		Object:    c.kit.Object(call, model.DatabaseV1, kindDataSource, d.ID),
		Title:     md.Plain(d.Title),
		CreatedAt: utc(d.CreatedTime),
		UpdatedAt: utc(d.LastEditedTime),
	}
	out.ParentRef = c.parentRef(call, d.DatabaseParent)
	out.URL = d.URL
	if len(d.Properties) > 0 {
		out.Properties = make(map[string]string, len(d.Properties))
		for name, p := range d.Properties {
			out.Properties[name] = p.Type
		}
	}
	meta := map[string]any{"object": "data_source"}
	if d.Parent.DatabaseID != "" {
		meta["database_ref"] = c.kit.Ref(call, kindDatabase, d.Parent.DatabaseID)
		meta["database_id"] = d.Parent.DatabaseID
	}
	if d.InTrash {
		meta["in_trash"] = true
	}
	if desc := md.Plain(d.Description); desc != "" {
		meta["description"] = desc
	}
	out.ProviderMetadata = meta
	return out, nil
}

// blockOf converts a block under parent (a ref) to block.v1.
func (c *Connector) blockOf(call *connectors.Call, parentRef string, b *md.Block) (model.Block, error) {
	if b == nil || b.ID == "" {
		return model.Block{}, saas.Mapping("notion", "a block without an id")
	}
	out := model.Block{
		Object:    c.kit.Object(call, model.BlockV1, kindBlock, b.ID),
		Type:      b.Type,
		Text:      b.Text(),
		ParentRef: parentRef,
		CreatedAt: utc(b.CreatedTime),
	}
	meta := map[string]any{}
	switch b.Type {
	case "to_do":
		meta["checked"] = b.Body.Checked
	case "code":
		meta["language"] = b.Body.Language
	}
	if b.HasChildren {
		meta["has_children"] = true
	}
	if len(meta) > 0 {
		out.ProviderMetadata = meta
	}
	return out, nil
}

// plain is a property's value as plain JSON: text as a string, a select
// as its option's name, a relation as page refs, a date as its start (or
// start/end), people by name; nil for a type without a plain value.
func (c *Connector) plain(call *connectors.Call, p notionapi.Property) any {
	switch v := p.(type) {
	case *notionapi.TitleProperty:
		return rest.TextOf(v.Title)
	case *notionapi.RichTextProperty:
		return rest.TextOf(v.RichText)
	case *notionapi.TextProperty:
		return rest.TextOf(v.Text)
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
			names = append(names, orID(u.Name, string(u.ID)))
		}
		return names
	case *notionapi.RelationProperty:
		refs := make([]string, 0, len(v.Relation))
		for _, r := range v.Relation {
			refs = append(refs, c.kit.Ref(call, kindPage, string(r.ID)))
		}
		return refs
	case *notionapi.CreatedTimeProperty:
		return utc(v.CreatedTime).Format(time.RFC3339)
	case *notionapi.LastEditedTimeProperty:
		return utc(v.LastEditedTime).Format(time.RFC3339)
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

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// orID is name, or id when the name is unknown (a user the integration
// cannot read).
func orID(name, id string) string {
	if name == "" {
		return id
	}
	return name
}
