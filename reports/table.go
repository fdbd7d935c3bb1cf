package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// TableAttempts is how many attempt transcripts the terminal shows for each
// failing or unknown spec; report.json holds them all.
const TableAttempts = 3

// WriteTable writes the run for a terminal: an aligned table with one row per
// property (PROPERTY VERDICT SPECS TIME REASON; the verdict is pass, FAIL,
// unknown or skipped, and the reason says why it was skipped or unknown, or which specs failed
// with their anomaly kinds, wrapped under its column within TableWidth),
// the headline verdict, then for each failing spec and each unknown one: its
// text, location, failure message, counts, differing JSON paths, the first
// TableAttempts attempts and the repro command. Control characters from the
// target are escaped, so a cell stays on one line and a response body cannot
// drive the terminal. Write errors are ignored, as for any console output.
func WriteTable(w io.Writer, r *Run) {
	var b strings.Builder
	for _, c := range r.Causes {
		b.WriteString(termCell(c.Sentence()) + "\n\n")
	}
	rows := [][]string{{"PROPERTY", "VERDICT", "SPECS", "TIME", "REASON"}}
	for i := range r.Properties {
		p := &r.Properties[i]
		rows = append(rows, []string{
			termCell(p.Name), termVerdict(p.Verdict), countsText(p.Counts()),
			fmtDuration(p.Duration), termCell(note(p)),
		})
	}
	WriteAligned(&b, wrapLastColumn(rows, TableWidth))
	mark, text := headline(r)
	fmt.Fprintf(&b, "\n%s: %s (%s)\n", mark, termCell(text), countsText(r.Counts()))
	if facts := runFacts(r); len(facts) > 0 {
		parts := make([]string, len(facts))
		for i, f := range facts {
			parts[i] = f[0] + " " + termCell(f[1])
		}
		b.WriteString(strings.Join(parts, ", ") + "\n")
	}
	termFindings(&b, "FAILURES", findings(r, Fail))
	termFindings(&b, "UNKNOWN", findings(r, Unknown))
	io.WriteString(w, b.String())
}

// termVerdict names a verdict for the table; a failure is in capitals.
func termVerdict(v Verdict) string {
	switch v {
	case Fail:
		return "FAIL"
	case Pass, Unknown, Skipped:
		return string(v)
	}
	return "unknown(" + termCell(string(v)) + ")"
}

// WriteAligned writes rows as columns two spaces apart, padded to the widest
// cell of each column (counted in runes); the last column is not padded.
func WriteAligned(b *strings.Builder, rows [][]string) {
	widths := columnWidths(rows)
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// columnWidths returns the width of each column of rows: its widest cell, in runes.
func columnWidths(rows [][]string) []int {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	return widths
}

// termFindings writes a section with one entry per finding.
func termFindings(b *strings.Builder, title string, fs []finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", title)
	for _, f := range fs {
		fmt.Fprintf(b, "\n%d) %s: %s\n", f.N, termCell(f.Property.Name), termCell(f.Spec.Text))
		if len(f.Spec.Anomalies) > 0 {
			fmt.Fprintf(b, "   found: %s\n", termCell(KindCounts(f.Spec.Anomalies)))
		}
		if f.Spec.Failure != "" {
			b.WriteString(termBlock(f.Spec.Failure, "   "))
		}
		if e := f.Spec.Evidence; e != nil {
			termEvidence(b, e)
		}
	}
}

// termEvidence writes an evidence block, each part under its own label.
func termEvidence(b *strings.Builder, e *Evidence) {
	if e.Message != "" {
		b.WriteString("   message:\n" + termBlock(e.Message, "     "))
	}
	if len(e.Counts) > 0 {
		b.WriteString("   counts:\n")
		rows := make([][]string, 0, len(e.Counts))
		for _, k := range sortedKeys(e.Counts) {
			rows = append(rows, []string{"   ", termCell(k), fmt.Sprint(e.Counts[k])})
		}
		WriteAligned(b, rows)
	}
	if len(e.DiffPaths) > 0 {
		b.WriteString("   differing paths:\n")
		for _, p := range e.DiffPaths {
			fmt.Fprintf(b, "     %s\n", termCell(p))
		}
	}
	if n := len(e.Attempts); n > 0 {
		shown := min(n, TableAttempts)
		fmt.Fprintf(b, "   attempts (%d of %d; all in report.json):\n", shown, n)
		for _, a := range e.Attempts[:shown] {
			b.WriteString(termBlock(clip(a, maxAttemptChars), "     "))
		}
	}
	if e.Repro != "" {
		fmt.Fprintf(b, "   repro:\n     %s\n", termCell(e.Repro))
	}
}

// termCell escapes s for one table cell: line breaks, tabs and other control
// characters are shown as escapes (\n, \t, \x1b), so the cell stays on one
// line and nothing reaches the terminal as a control sequence.
func termCell(s string) string {
	return termEscape(s, false)
}

// termBlock escapes s like termCell but keeps its lines, each written with
// the indent before it.
func termBlock(s, indent string) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(indent+termEscape(l, true), " ") + "\n")
	}
	return b.String()
}

// termEscape replaces control characters with Go-style escapes; tabs are
// kept when keepTabs is set.
func termEscape(s string, keepTabs bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t' && keepTabs:
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
