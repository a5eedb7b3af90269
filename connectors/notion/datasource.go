package notion

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Since Notion API 2025-09-03 a database holds one or more data sources,
// and its pages (rows) are in those: queries, schemas and new rows name
// the data source. A user names a database (its URL, id or ref) or one of
// its data sources; a database of one data source stands for it, one of
// several needs data_source too.

type dataSourceIn struct {
	Database   string `json:"database" jsonschema:"the database or data source: a ref from search, a Notion id, or the database's URL"`
	DataSource string `json:"data_source,omitempty" jsonschema:"for a database of several data sources: which one, by ref, id or name"`
}

// dataSourceID resolves in to a data source id, reading the database's
// data sources when in names a database.
func (c *Connector) dataSourceID(ctx context.Context, token string, call *connectors.Call, in dataSourceIn) (string, error) {
	kind, id, err := c.resolve(call, "database", in.Database, kindDataSource, kindDatabase)
	if err != nil {
		return "", err
	}
	if kind == kindDataSource {
		return id, nil
	}
	if kind == "" {
		// A native id: a data source's, or a database's (as in its URL).
		var ds rest.DataSource
		err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "data_sources/" + id}, &ds)
		if err == nil {
			return ds.ID, nil
		}
		if code := legate.CodeOf(err); code != legate.CodeNotFound && code != legate.CodeInvalidArgument {
			return "", err // Notion answers a database's id with 404 or 400
		}
	}
	var db rest.Database
	if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "databases/" + id}, &db); err != nil {
		return "", err
	}
	return c.pickDataSource(call, &db, in.DataSource)
}

// pickDataSource is the data source of db that want names, or its only
// one when want is empty.
func (c *Connector) pickDataSource(call *connectors.Call, db *rest.Database, want string) (string, error) {
	if want != "" {
		wantID := nativeID(want)
		if strings.HasPrefix(want, kindDataSource+"://") {
			var err error
			if wantID, err = c.kit.Resolve(call, kindDataSource, want); err != nil {
				return "", err
			}
		}
		for _, ds := range db.DataSources {
			if ds.ID == wantID || strings.EqualFold(ds.Name, want) {
				return ds.ID, nil
			}
		}
	}
	switch {
	case len(db.DataSources) == 1 && want == "":
		return db.DataSources[0].ID, nil
	case len(db.DataSources) == 0:
		return "", legate.Errorf(legate.CodeNotFound, "notion: database %q has no data source shared with the integration; share it (… menu, Connections)", md.Plain(db.Title))
	}
	names := make([]string, len(db.DataSources))
	for i, ds := range db.DataSources {
		names[i] = fmt.Sprintf("%q (%s)", ds.Name, c.kit.Ref(call, kindDataSource, ds.ID))
	}
	what := "has several data sources"
	if want != "" {
		what = fmt.Sprintf("has no data source %q", want)
	}
	return "", legate.Errorf(legate.CodeInvalidArgument, "notion: database %q %s; pass data_source, one of: %s", md.Plain(db.Title), what, strings.Join(names, ", "))
}

// Field is one property of a data source's schema.
type Field struct {
	Name    string   `json:"name"`
	Type    string   `json:"type" jsonschema:"title, rich_text, number, select, status, multi_select, date, people, relation, checkbox, url, email, phone_number, formula, …"`
	Options []string `json:"options,omitempty" jsonschema:"for select, status and multi_select: the option names"`
	// RelatedRef is a relation's data source.
	RelatedRef string `json:"related_ref,omitempty" jsonschema:"for a relation: ref of the data source its pages are in"`
	Format     string `json:"format,omitempty" jsonschema:"for a number: its format (number, percent, dollar, …)"`
}

// Schema is what get_data_source returns: the data source (database.v1)
// and its properties with their types and options.
type Schema struct {
	model.Database
	Fields []Field `json:"fields"`
}

func (c *Connector) getDataSource(ctx context.Context, call *connectors.Call, in *dataSourceIn) (*legate.Result, error) {
	var out Schema
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		id, err := c.dataSourceID(ctx, token, call, *in)
		if err != nil {
			return err
		}
		var ds rest.DataSource
		if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "data_sources/" + id}, &ds); err != nil {
			return err
		}
		out.Database, err = c.databaseOf(call, &ds)
		out.Fields = c.fields(call, &ds)
		return err
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d properties", md.OrUntitled(out.Title), out.URL, len(out.Fields))
	for _, f := range out.Fields {
		fmt.Fprintf(&b, "\n- %s (%s)", f.Name, f.Type)
		if len(f.Options) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(f.Options, ", "))
		}
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// fields are ds's properties, by name.
func (c *Connector) fields(call *connectors.Call, ds *rest.DataSource) []Field {
	out := make([]Field, 0, len(ds.Properties))
	for name, p := range ds.Properties {
		f := Field{Name: name, Type: p.Type, Options: p.Options()}
		if p.Relation != nil && p.Relation.DataSourceID != "" {
			f.RelatedRef = c.kit.Ref(call, kindDataSource, p.Relation.DataSourceID)
		}
		if p.Number != nil {
			f.Format = p.Number.Format
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type queryDatabaseIn struct {
	saas.Page
	dataSourceIn
	TitleContains string           `json:"title_contains,omitempty" jsonschema:"only pages whose title contains this text"`
	EditedSince   string           `json:"edited_since,omitempty" jsonschema:"only pages edited at or after this time, RFC 3339 (2026-01-31T00:00:00Z)"`
	Filter        map[string]any   `json:"filter,omitempty" jsonschema:"a filter in Notion's own language, passed through: {\"property\":\"Status\",\"status\":{\"does_not_equal\":\"Done\"}}, or {\"and\":[…]} / {\"or\":[…]}; property names as get_data_source gives them"`
	Sorts         []map[string]any `json:"sorts,omitempty" jsonschema:"sorts in Notion's language, passed through: [{\"property\":\"Due\",\"direction\":\"ascending\"}] or [{\"timestamp\":\"created_time\",\"direction\":\"descending\"}]; default: last edited first"`
}

// queryBody is the body of a data source query: in's filter, with the
// simple filters and'ed to it, and its sorts.
func queryBody(in *queryDatabaseIn, p saas.Paging) (map[string]any, error) {
	var filters []any
	if in.Filter != nil {
		if len(in.Filter) == 0 {
			return nil, legate.Errorf(legate.CodeInvalidArgument, `notion: filter: must be a filter object of Notion's language, like {"property":"Status","status":{"equals":"Done"}}`)
		}
		filters = append(filters, in.Filter)
	}
	if in.TitleContains != "" {
		filters = append(filters, map[string]any{"property": "title", "title": map[string]any{"contains": in.TitleContains}})
	}
	if in.EditedSince != "" {
		since, err := time.Parse(time.RFC3339, in.EditedSince)
		if err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: edited_since: must be an RFC 3339 time, got %q", in.EditedSince)
		}
		filters = append(filters, map[string]any{"timestamp": "last_edited_time", "last_edited_time": map[string]any{"on_or_after": since.UTC().Format(time.RFC3339)}})
	}
	body := map[string]any{"page_size": p.Size}
	if p.Token != "" {
		body["start_cursor"] = p.Token
	}
	switch len(filters) {
	case 0:
	case 1:
		body["filter"] = filters[0]
	default:
		body["filter"] = map[string]any{"and": filters}
	}
	body["sorts"] = []any{map[string]any{"timestamp": "last_edited_time", "direction": "descending"}}
	if len(in.Sorts) > 0 {
		for _, s := range in.Sorts {
			if s["property"] == nil && s["timestamp"] == nil {
				return nil, legate.Errorf(legate.CodeInvalidArgument, `notion: sorts: each sort names a property or a timestamp, like [{"property":"Due","direction":"ascending"}]`)
			}
		}
		body["sorts"] = in.Sorts
	}
	return body, nil
}

func (c *Connector) queryDatabase(ctx context.Context, call *connectors.Call, in *queryDatabaseIn) (*legate.Result, error) {
	if _, _, err := c.resolve(call, "database", in.Database, kindDataSource, kindDatabase); err != nil {
		return nil, err
	}
	p, err := c.kit.Open(call, in.Page, DefaultPage, MaxPage)
	if err != nil {
		return nil, err
	}
	body, err := queryBody(in, p)
	if err != nil {
		return nil, err
	}
	var out saas.List[model.Page]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		id, err := c.dataSourceID(ctx, token, call, in.dataSourceIn)
		if err != nil {
			return err
		}
		var l rest.List[rest.Page]
		if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodPost, Path: "data_sources/" + id + "/query", Body: body}, &l); err != nil {
			return err
		}
		items, err := saas.Convert(l.Results, func(p rest.Page) (model.Page, error) { return c.pageOf(call, &p) })
		if err != nil {
			return err
		}
		out = saas.ListOf(c.kit, call, items, l.Next())
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d page(s)", len(out.Items))
	for _, pg := range out.Items {
		b.WriteString("\n" + pageText(pg))
	}
	moreText(&b, out.NextCursor)
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// propertyTypes are the types of the properties of data source id, by
// name.
func (c *Connector) propertyTypes(ctx context.Context, token, id string) (map[string]string, error) {
	var ds rest.DataSource
	if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "data_sources/" + id}, &ds); err != nil {
		return nil, err
	}
	types := make(map[string]string, len(ds.Properties))
	for name, p := range ds.Properties {
		types[name] = p.Type
	}
	return types, nil
}
