package notion

import (
	"time"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// parentRef is the ref of a Notion parent, "" for the workspace.
func (c *base) parentRef(call *connectors.Call, p rest.Parent) string {
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
			out.Properties[name] = rest.Plain(prop, func(id string) string { return c.kit.Ref(call, kindPage, id) })
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

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
