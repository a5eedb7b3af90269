package notion

import (
	"encoding/json"
	"time"

	"github.com/jomei/notionapi"
)

// The objects of Notion API 2025-09-03 as the connector reads them.
// notionapi's Page and Properties decode a page; the rest (data sources,
// parents of type data_source_id, blocks of every type) it does not know.

// apiParent is the parent of a page, database, data source, block or
// comment.
type apiParent struct {
	Type         string `json:"type"`
	PageID       string `json:"page_id,omitempty"`
	DatabaseID   string `json:"database_id,omitempty"`
	DataSourceID string `json:"data_source_id,omitempty"`
	BlockID      string `json:"block_id,omitempty"`
	Workspace    bool   `json:"workspace,omitempty"`
}

// apiPage is a page: notionapi's, with the parent and trash state of
// 2025-09-03.
type apiPage struct {
	notionapi.Page
	Parent  apiParent `json:"parent"`
	InTrash bool      `json:"in_trash"`
}

// apiUser is a user or bot.
type apiUser struct {
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

// apiDatabase is a database: a container of data sources.
type apiDatabase struct {
	Object         string      `json:"object"`
	ID             string      `json:"id"`
	Title          []richRun   `json:"title"`
	Parent         apiParent   `json:"parent"`
	DataSources    []dsSummary `json:"data_sources"`
	URL            string      `json:"url"`
	CreatedTime    time.Time   `json:"created_time"`
	LastEditedTime time.Time   `json:"last_edited_time"`
	InTrash        bool        `json:"in_trash"`
	IsInline       bool        `json:"is_inline"`
}

// dsSummary names one data source of a database.
type dsSummary struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// dataSource is a data source: a table of pages sharing properties.
type dataSource struct {
	Object         string                `json:"object"`
	ID             string                `json:"id"`
	Title          []richRun             `json:"title"`
	Description    []richRun             `json:"description"`
	Parent         apiParent             `json:"parent"`
	DatabaseParent apiParent             `json:"database_parent"`
	Properties     map[string]dsProperty `json:"properties"`
	URL            string                `json:"url"`
	CreatedTime    time.Time             `json:"created_time"`
	LastEditedTime time.Time             `json:"last_edited_time"`
	InTrash        bool                  `json:"in_trash"`
}

// dsProperty is a data source's property: its type and, for the types
// that have them, options or the related data source.
type dsProperty struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Type        string      `json:"type"`
	Select      *optionList `json:"select,omitempty"`
	Status      *optionList `json:"status,omitempty"`
	MultiSelect *optionList `json:"multi_select,omitempty"`
	Number      *struct {
		Format string `json:"format"`
	} `json:"number,omitempty"`
	Relation *struct {
		DataSourceID string `json:"data_source_id"`
	} `json:"relation,omitempty"`
}

type optionList struct {
	Options []struct {
		Name string `json:"name"`
	} `json:"options"`
}

// options are the names of a select, status or multi_select property's
// options.
func (p dsProperty) options() []string {
	var out []string
	for _, l := range []*optionList{p.Select, p.Status, p.MultiSelect} {
		if l != nil {
			for _, o := range l.Options {
				out = append(out, o.Name)
			}
		}
	}
	return out
}

// apiComment is a comment on a page or block.
type apiComment struct {
	Object       string    `json:"object"`
	ID           string    `json:"id"`
	Parent       apiParent `json:"parent"`
	DiscussionID string    `json:"discussion_id"`
	CreatedTime  time.Time `json:"created_time"`
	CreatedBy    apiUser   `json:"created_by"`
	RichText     []richRun `json:"rich_text"`
}

// list is a page of a list endpoint's results.
type list[T any] struct {
	Object     string `json:"object"`
	Results    []T    `json:"results"`
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor"`
}

// next is the cursor after l: "" on the last page.
func (l *list[T]) next() string {
	if !l.HasMore {
		return ""
	}
	return l.NextCursor
}

// apiBlock is a block of any type: the fields of its type's object that
// the connector renders are in Body.
type apiBlock struct {
	Object      string    `json:"object"`
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	HasChildren bool      `json:"has_children"`
	CreatedTime time.Time `json:"created_time"`
	CreatedBy   apiUser   `json:"created_by"`
	InTrash     bool      `json:"in_trash"`
	Body        blockBody `json:"-"`
}

// blockBody is the object under a block's type.
type blockBody struct {
	RichText   []richRun   `json:"rich_text"`
	Checked    bool        `json:"checked"`
	Language   string      `json:"language"`
	Title      string      `json:"title"`
	URL        string      `json:"url"`
	Caption    []richRun   `json:"caption"`
	Expression string      `json:"expression"`
	Cells      [][]richRun `json:"cells"`
	External   *struct {
		URL string `json:"url"`
	} `json:"external"`
	File *struct {
		URL string `json:"url"`
	} `json:"file"`
}

// UnmarshalJSON reads a block and the object under its type.
func (b *apiBlock) UnmarshalJSON(data []byte) error {
	type plain apiBlock
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	var typed map[string]json.RawMessage
	if err := json.Unmarshal(data, &typed); err != nil {
		return err
	}
	if raw, ok := typed[b.Type]; ok && len(raw) > 0 && raw[0] == '{' {
		return json.Unmarshal(raw, &b.Body)
	}
	return nil
}

// text is the block's text, plain.
func (b *apiBlock) text() string {
	if b.Type == "child_page" || b.Type == "child_database" {
		return b.Body.Title
	}
	return plainText(b.Body.RichText)
}

// richRun is a run of rich text as Notion gives and takes it.
type richRun struct {
	Type        string       `json:"type"`
	Text        *runText     `json:"text,omitempty"`
	Annotations *annotations `json:"annotations,omitempty"`
	PlainText   string       `json:"plain_text,omitempty"`
	Href        string       `json:"href,omitempty"`
}

type runText struct {
	Content string `json:"content"`
	Link    *struct {
		URL string `json:"url"`
	} `json:"link,omitempty"`
}

type annotations struct {
	Bold          bool   `json:"bold,omitempty"`
	Italic        bool   `json:"italic,omitempty"`
	Strikethrough bool   `json:"strikethrough,omitempty"`
	Code          bool   `json:"code,omitempty"`
	Color         string `json:"color,omitempty"`
}

// plainText is rich text's text.
func plainText(rt []richRun) string {
	var out []byte
	for _, r := range rt {
		switch {
		case r.PlainText != "":
			out = append(out, r.PlainText...)
		case r.Text != nil:
			out = append(out, r.Text.Content...)
		}
	}
	return string(out)
}
