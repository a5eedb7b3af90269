// Package md converts between Markdown and Notion's blocks and rich
// text: Blocks and Inline write Markdown as blocks to create,
// RenderBlock and Render read blocks back as Markdown.
package md

import (
	"encoding/json"
	"time"
)

// Block is a block of any type: the fields of its type's object that
// the connector renders are in Body.
type Block struct {
	Object      string    `json:"object"`
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	HasChildren bool      `json:"has_children"`
	CreatedTime time.Time `json:"created_time"`
	CreatedBy   struct {
		ID string `json:"id"`
	} `json:"created_by"`
	InTrash bool `json:"in_trash"`
	Body    Body `json:"-"`
}

// Body is the object under a block's type.
type Body struct {
	RichText   []Run   `json:"rich_text"`
	Checked    bool    `json:"checked"`
	Language   string  `json:"language"`
	Title      string  `json:"title"`
	URL        string  `json:"url"`
	Caption    []Run   `json:"caption"`
	Expression string  `json:"expression"`
	Cells      [][]Run `json:"cells"`
	External   *struct {
		URL string `json:"url"`
	} `json:"external"`
	File *struct {
		URL string `json:"url"`
	} `json:"file"`
}

// UnmarshalJSON reads a block and the object under its type.
func (b *Block) UnmarshalJSON(data []byte) error {
	type plain Block
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

// Text is the block's text, plain.
func (b *Block) Text() string {
	if b.Type == "child_page" || b.Type == "child_database" {
		return b.Body.Title
	}
	return Plain(b.Body.RichText)
}

// Run is a run of rich text as Notion gives and takes it.
type Run struct {
	Type        string       `json:"type"`
	Text        *RunText     `json:"text,omitempty"`
	Annotations *Annotations `json:"Annotations,omitempty"`
	PlainText   string       `json:"plain_text,omitempty"`
	Href        string       `json:"href,omitempty"`
}

type RunText struct {
	Content string `json:"content"`
	Link    *struct {
		URL string `json:"url"`
	} `json:"link,omitempty"`
}

type Annotations struct {
	Bold          bool   `json:"bold,omitempty"`
	Italic        bool   `json:"italic,omitempty"`
	Strikethrough bool   `json:"strikethrough,omitempty"`
	Code          bool   `json:"code,omitempty"`
	Color         string `json:"color,omitempty"`
}

// Plain is rich text's text.
func Plain(rt []Run) string {
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
