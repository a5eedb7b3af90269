package docs

import (
	"strings"

	"google.golang.org/api/docs/v1"
)

// Markdown is d's body as Markdown: headings, bulleted and numbered
// lists, tables, bold, italic and links; it stops once past limit bytes.
func Markdown(d *docs.Document, limit int) string {
	var b strings.Builder
	if d.Body == nil {
		return ""
	}
	for _, e := range d.Body.Content {
		if b.Len() > limit {
			break
		}
		switch {
		case e.Paragraph != nil:
			paragraph(&b, d, e.Paragraph)
		case e.Table != nil:
			table(&b, e.Table)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

var headings = map[string]string{"TITLE": "# ", "HEADING_1": "# ", "HEADING_2": "## ", "HEADING_3": "### ",
	"HEADING_4": "#### ", "HEADING_5": "##### ", "HEADING_6": "###### ", "SUBTITLE": "## "}

func paragraph(b *strings.Builder, d *docs.Document, p *docs.Paragraph) {
	text := runs(p.Elements)
	if strings.TrimSpace(text) == "" {
		b.WriteString("\n")
		return
	}
	switch {
	case p.Bullet != nil:
		b.WriteString(strings.Repeat("  ", int(p.Bullet.NestingLevel)))
		if ordered(d, p.Bullet) {
			b.WriteString("1. ")
		} else {
			b.WriteString("- ")
		}
	case p.ParagraphStyle != nil && headings[p.ParagraphStyle.NamedStyleType] != "":
		b.WriteString(headings[p.ParagraphStyle.NamedStyleType])
	}
	b.WriteString(strings.TrimRight(text, "\n"))
	b.WriteString("\n")
	if p.Bullet == nil {
		b.WriteString("\n")
	}
}

// ordered reports whether a bullet's list level is numbered.
func ordered(d *docs.Document, bl *docs.Bullet) bool {
	l, ok := d.Lists[bl.ListId]
	if !ok || l.ListProperties == nil || int(bl.NestingLevel) >= len(l.ListProperties.NestingLevels) {
		return false
	}
	g := l.ListProperties.NestingLevels[bl.NestingLevel].GlyphType
	return g != "" && g != "GLYPH_TYPE_UNSPECIFIED" && g != "NONE"
}

// runs is a paragraph's text, its runs' styles as Markdown.
func runs(elems []*docs.ParagraphElement) string {
	var b strings.Builder
	for _, pe := range elems {
		r := pe.TextRun
		if r == nil {
			continue
		}
		text := r.Content
		trail := ""
		if t := strings.TrimRight(text, "\n"); t != text {
			text, trail = t, text[len(t):]
		}
		if s := r.TextStyle; s != nil && strings.TrimSpace(text) != "" {
			if s.Bold && s.Italic {
				text = "***" + text + "***"
			} else if s.Bold {
				text = "**" + text + "**"
			} else if s.Italic {
				text = "*" + text + "*"
			}
			if s.Link != nil && s.Link.Url != "" {
				text = "[" + text + "](" + s.Link.Url + ")"
			}
		}
		b.WriteString(text + trail)
	}
	return b.String()
}

func table(b *strings.Builder, t *docs.Table) {
	for i, row := range t.TableRows {
		b.WriteString("|")
		for _, c := range row.TableCells {
			var cell []string
			for _, e := range c.Content {
				if e.Paragraph != nil {
					if s := strings.TrimSpace(runs(e.Paragraph.Elements)); s != "" {
						cell = append(cell, s)
					}
				}
			}
			b.WriteString(" " + strings.ReplaceAll(strings.Join(cell, " "), "|", `\|`) + " |")
		}
		b.WriteString("\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat("---|", len(row.TableCells)) + "\n")
		}
	}
	b.WriteString("\n")
}
