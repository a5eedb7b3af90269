package md

import (
	"strconv"
	"strings"
)

// RenderBlock is one block as a line (or lines) of Markdown.
func RenderBlock(b *Block, number int, indent string) string {
	text := Render(b.Body.RichText)
	switch b.Type {
	case "heading_1":
		return "# " + text
	case "heading_2":
		return "## " + text
	case "heading_3":
		return "### " + text
	case "bulleted_list_item", "toggle":
		return "- " + text
	case "numbered_list_item":
		return strconv.Itoa(number) + ". " + text
	case "to_do":
		if b.Body.Checked {
			return "- [x] " + text
		}
		return "- [ ] " + text
	case "quote", "callout":
		return "> " + strings.ReplaceAll(text, "\n", "\n"+indent+"> ")
	case "code":
		return "```" + b.Body.Language + "\n" + Plain(b.Body.RichText) + "\n" + indent + "```"
	case "divider":
		return "---"
	case "equation":
		return "$$" + b.Body.Expression + "$$"
	case "child_page":
		return "[" + OrUntitled(b.Body.Title) + "](https://www.notion.so/" + strings.ReplaceAll(b.ID, "-", "") + ") (page)"
	case "child_database":
		return "[" + OrUntitled(b.Body.Title) + "](https://www.notion.so/" + strings.ReplaceAll(b.ID, "-", "") + ") (database)"
	case "bookmark", "embed", "link_preview":
		return "<" + b.Body.URL + ">"
	case "image", "file", "pdf", "video", "audio":
		u := ""
		if b.Body.External != nil {
			u = b.Body.External.URL
		} else if b.Body.File != nil {
			u = b.Body.File.URL
		}
		return "![" + Render(b.Body.Caption) + "](" + u + ")"
	case "table_row":
		cells := make([]string, len(b.Body.Cells))
		for i, cell := range b.Body.Cells {
			cells[i] = Render(cell)
		}
		return "| " + strings.Join(cells, " | ") + " |"
	case "paragraph", "template", "synced_block", "column_list", "column", "table":
		return text
	}
	return "(" + b.Type + ")"
}

// Render is rich text as inline Markdown.
func Render(rt []Run) string {
	var b strings.Builder
	for _, r := range rt {
		t := r.PlainText
		if t == "" && r.Text != nil {
			t = r.Text.Content
		}
		lead, trail := "", ""
		if a := r.Annotations; a != nil && strings.TrimSpace(t) != "" {
			// Emphasis must not start or end with a space: keep them out.
			core := strings.TrimSpace(t)
			i := strings.Index(t, core)
			lead, trail, t = t[:i], t[i+len(core):], core
			if a.Code {
				t = "`" + t + "`"
			}
			if a.Bold {
				t = "**" + t + "**"
			}
			if a.Italic {
				t = "_" + t + "_"
			}
			if a.Strikethrough {
				t = "~~" + t + "~~"
			}
		}
		if href := r.Href; href != "" || (r.Text != nil && r.Text.Link != nil) {
			if href == "" {
				href = r.Text.Link.URL
			}
			t = "[" + t + "](" + href + ")"
		}
		t = lead + t + trail
		b.WriteString(t)
	}
	return b.String()
}

// OrUntitled is a title, "(untitled)" when empty.
func OrUntitled(s string) string {
	if s == "" {
		return "(untitled)"
	}
	return s
}
