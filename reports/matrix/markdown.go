package matrix

import (
	"fmt"
	"io"
	"strings"
)

// Legend explains the marks of the table.
const Legend = "✗ unsafe (a run: a failure of an unsafe kind, such as a duplicate or lost record, an answer served " +
	"across tenants, credentials or requests, an accepted mismatch, a stuck key, a dropped event, an event an API lost, " +
	"published twice under two ids or published for nothing; a profile: an unsafe " +
	"behaviour) · ≠ differs from the most common value of its row (a status, header or policy) · – no data"

// cellText is a cell as the Markdown table shows it.
func cellText(c Cell) string {
	v := escapeCell(c.Value)
	switch c.Mark {
	case Empty:
		return "–"
	case Unsafe:
		return "**✗ " + v + "**"
	case Different:
		return "≠ " + v
	case NotProbed:
		return "_" + v + "_"
	}
	return v
}

// escapeCell keeps a value inside one Markdown table cell.
func escapeCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "*", `\*`, "`", "\\`", "<", "&lt;").Replace(s)
}

// WriteMarkdown writes the table: a header row with one column per target, a row per behaviour
// and per property verdict, the legend, the sources, and every unsafe cell with its reason.
func (t *Table) WriteMarkdown(w io.Writer) {
	var b strings.Builder
	b.WriteString("| behaviour |")
	for _, c := range t.Columns {
		b.WriteString(" " + escapeCell(c.Name) + " |")
	}
	b.WriteString("\n|---|")
	for range t.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("| `" + strings.NewReplacer("|", `\|`, "`", "'").Replace(r.Name) + "` |")
		for _, c := range r.Cells {
			b.WriteString(" " + cellText(c) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + Legend + "\n\n")
	for _, c := range t.Columns {
		target := ""
		if c.Target != "" && c.Target != c.Name {
			target = " (target " + escapeCell(c.Target) + ")"
		}
		fmt.Fprintf(&b, "- %s: %s %s%s%s\n", escapeCell(c.Name), c.Kind, escapeCell(c.Source), target, kindNote(c.Kind))
	}
	if unsafe := t.Unsafe(); len(unsafe) > 0 {
		fmt.Fprintf(&b, "\n**Unsafe (%d):**\n\n", len(unsafe))
		for _, u := range unsafe {
			b.WriteString("- ✗ " + escapeCell(u) + "\n")
		}
	}
	io.WriteString(w, b.String())
}

// kindNote says where a column's behaviour rows come from.
func kindNote(kind string) string {
	if kind == KindRun {
		return " (behaviour rows: the declared profile the run checked)"
	}
	return ""
}
