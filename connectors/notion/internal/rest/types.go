package rest

import (
	"time"

	"github.com/legate-mcp/legate/connectors/notion/internal/md"
)

// The objects of Notion API 2025-09-03 as the connector reads them, each
// decoded in one pass. notionapi's types build what the connector sends
// (properties of a write); reading a page with them decodes every
// property twice (notionapi.Properties goes through a map of any) and
// they do not know data sources, parents of type data_source_id or the
// blocks of 2025-09-03.

// Parent is the parent of a page, database, data source, block or
// comment.
type Parent struct {
	Type         string `json:"type"`
	PageID       string `json:"page_id,omitempty"`
	DatabaseID   string `json:"database_id,omitempty"`
	DataSourceID string `json:"data_source_id,omitempty"`
	BlockID      string `json:"block_id,omitempty"`
	Workspace    bool   `json:"workspace,omitempty"`
}

// Page is a page.
type Page struct {
	Object         string    `json:"object"`
	ID             string    `json:"id"`
	CreatedTime    time.Time `json:"created_time"`
	LastEditedTime time.Time `json:"last_edited_time"`
	CreatedBy      User      `json:"created_by"`
	Archived       bool      `json:"archived"`
	InTrash        bool      `json:"in_trash"`
	Parent         Parent    `json:"parent"`
	URL            string    `json:"url"`
	PublicURL      string    `json:"public_url"`
	Properties     Values    `json:"properties"`
}

// Kind is the page's object: "page".
func (p Page) Kind() string { return p.Object }

// User is a user or bot.
type User struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	Type      string `json:"type,omitempty"`
	Name      string `json:"name,omitempty"`
	AvatarURL string `json:"avatar_url,omitempty"`
	Person    *struct {
		Email string `json:"email"`
	} `json:"person,omitempty"`
	Bot *struct {
		WorkspaceName string `json:"workspace_name"`
	} `json:"bot,omitempty"`
}

// Database is a database: a container of data sources.
type Database struct {
	Object         string          `json:"object"`
	ID             string          `json:"id"`
	Title          []md.Run        `json:"title"`
	Parent         Parent          `json:"parent"`
	DataSources    []DataSourceRef `json:"data_sources"`
	URL            string          `json:"url"`
	CreatedTime    time.Time       `json:"created_time"`
	LastEditedTime time.Time       `json:"last_edited_time"`
	InTrash        bool            `json:"in_trash"`
	IsInline       bool            `json:"is_inline"`
}

// DataSourceRef names one data source of a database.
type DataSourceRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// DataSource is a data source: a table of pages sharing properties.
type DataSource struct {
	Object         string              `json:"object"`
	ID             string              `json:"id"`
	Title          []md.Run            `json:"title"`
	Description    []md.Run            `json:"description"`
	Parent         Parent              `json:"parent"`
	DatabaseParent Parent              `json:"database_parent"`
	Properties     map[string]Property `json:"properties"`
	URL            string              `json:"url"`
	CreatedTime    time.Time           `json:"created_time"`
	LastEditedTime time.Time           `json:"last_edited_time"`
	InTrash        bool                `json:"in_trash"`
}

// Kind is the data source's object: "data_source".
func (d DataSource) Kind() string { return d.Object }

// Property is a data source's property: its type and, for the types
// that have them, options or the related data source.
type Property struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Type        string      `json:"type"`
	Select      *OptionList `json:"select,omitempty"`
	Status      *OptionList `json:"status,omitempty"`
	MultiSelect *OptionList `json:"multi_select,omitempty"`
	Number      *struct {
		Format string `json:"format"`
	} `json:"number,omitempty"`
	Relation *struct {
		DataSourceID string `json:"data_source_id"`
	} `json:"relation,omitempty"`
}

type OptionList struct {
	Options []struct {
		Name string `json:"name"`
	} `json:"options"`
}

// Options are the names of a select, status or multi_select property's
// options.
func (p Property) Options() []string {
	var out []string
	for _, l := range []*OptionList{p.Select, p.Status, p.MultiSelect} {
		if l != nil {
			for _, o := range l.Options {
				out = append(out, o.Name)
			}
		}
	}
	return out
}

// Comment is a comment on a page or block.
type Comment struct {
	Object       string    `json:"object"`
	ID           string    `json:"id"`
	Parent       Parent    `json:"parent"`
	DiscussionID string    `json:"discussion_id"`
	CreatedTime  time.Time `json:"created_time"`
	CreatedBy    User      `json:"created_by"`
	RichText     []md.Run  `json:"rich_text"`
}

// list is a page of a list endpoint's results.
type List[T any] struct {
	Object     string `json:"object"`
	Results    []T    `json:"results"`
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor"`
}

// Next is the cursor after l: "" on the last page.
func (l *List[T]) Next() string {
	if !l.HasMore {
		return ""
	}
	return l.NextCursor
}

// Title is the text of a page's title property.
func Title(props Values) string {
	for _, p := range props {
		if p.Type == "title" {
			return md.Plain(p.Title)
		}
	}
	return ""
}
