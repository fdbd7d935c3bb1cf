package reports

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The reason column of the properties table (terminal, Markdown, HTML) is never cut: the
// terminal wraps it at spaces under its own column so that a row stays within TableWidth
// columns (a word longer than the column is kept whole), Markdown leaves the wrapping to the
// renderer, and report.html wraps it in its cell. Each reason shows the kinds of the anomalies
// behind it.

// TableWidth is the width in columns the terminal table keeps its rows within, by wrapping the
// reason column (a wide first column leaves the reason at least minReasonWidth).
const TableWidth = 120

// minReasonWidth is the narrowest the terminal's reason column gets.
const minReasonWidth = 40

// reason is one entry of a property's reason column: why it was skipped or is unknown (its
// Reason), or the text of a spec that made it fail or unknown, with the kinds of that spec's
// anomalies.
type reason struct {
	Text  string
	Kinds []Kind
}

// reasons returns the entries of a property's reason column: its Reason, else for a failing
// or unknown property one per spec that made it so; none for a pass without a reason.
func reasons(p *Property) []reason {
	if p.Reason != "" {
		return []reason{{Text: p.Reason}}
	}
	v := normal(p.Verdict)
	if v == Pass || v == Skipped {
		return nil
	}
	var out []reason
	for _, s := range p.Specs {
		if normal(s.Verdict) == v {
			out = append(out, reason{Text: s.Text, Kinds: kindsOf(s.Anomalies)})
		}
	}
	return out
}

// kindsOf returns the distinct kinds of as, worst first (unsafe kinds, then the others, each in
// Kinds order, as SortWorstFirst orders the evidence); a kind this version does not know comes
// last of its group.
func kindsOf(as []Anomaly) []Kind {
	var out []Kind
	for _, a := range as {
		if !slices.Contains(out, a.Kind) {
			out = append(out, a.Kind)
		}
	}
	slices.SortStableFunc(out, func(a, b Kind) int { return worstRank(a) - worstRank(b) })
	return out
}

// note is a property's reason column on one line: "spec text [duplicate-record]; other spec".
func note(p *Property) string {
	rs := reasons(p)
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Text
		if len(r.Kinds) > 0 {
			parts[i] += " [" + joinKinds(r.Kinds, ", ") + "]"
		}
	}
	return strings.Join(parts, "; ")
}

// joinKinds joins kinds with sep.
func joinKinds(ks []Kind, sep string) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, sep)
}

// mdReasons is a property's reason column in Markdown: each reason on its own line of the
// cell, its kinds as code spans.
func mdReasons(p *Property) string {
	rs := reasons(p)
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = mdText(r.Text)
		if len(r.Kinds) > 0 {
			ks := make([]string, len(r.Kinds))
			for j, k := range r.Kinds {
				ks[j] = mdCode(string(k))
			}
			parts[i] += " (" + strings.Join(ks, ", ") + ")"
		}
	}
	return strings.Join(parts, "<br>")
}

// wrapLastColumn returns rows with each row's last cell wrapped at spaces so that the row fits
// width (its continuation lines become rows of their own, empty but for that cell), the
// other columns as wide as WriteAligned makes them.
func wrapLastColumn(rows [][]string, width int) [][]string {
	if len(rows) == 0 {
		return rows
	}
	start := 0 // where WriteAligned starts the last column
	for _, w := range columnWidths(rows)[:len(rows[0])-1] {
		start += w + 2
	}
	room := max(minReasonWidth, width-start)
	var out [][]string
	for _, row := range rows {
		last := len(row) - 1
		lines := WrapWords(row[last], room)
		first := slices.Clone(row)
		first[last] = lines[0]
		out = append(out, first)
		for _, l := range lines[1:] {
			cont := make([]string, len(row))
			cont[last] = l
			out = append(out, cont)
		}
	}
	return out
}

// WrapWords folds s at spaces into lines of at most width runes; a longer word is its own line,
// whole. It returns at least one line.
func WrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}

// htmlReason is one reason of report.html's reason column, its kinds as badges.
type htmlReason struct {
	Text  string
	Kinds []htmlKind
}

// htmlKind is a kind's badge: its name, whether it is unsafe, and whether the page explains it
// (and so links to #kind-NAME); N counts it where the page says how many were found.
type htmlKind struct {
	Name              string
	Unsafe, Explained bool
	N                 int
}

// newHTMLKind makes k's badge.
func newHTMLKind(k Kind, n int) htmlKind {
	_, explained := Explain(k)
	return htmlKind{Name: string(k), Unsafe: k.Unsafe(), Explained: explained, N: n}
}

// htmlReasons returns a property's reasons for report.html.
func htmlReasons(p *Property) []htmlReason {
	var out []htmlReason
	for _, r := range reasons(p) {
		hr := htmlReason{Text: r.Text}
		for _, k := range r.Kinds {
			hr.Kinds = append(hr.Kinds, newHTMLKind(k, 0))
		}
		out = append(out, hr)
	}
	return out
}

// foundKinds counts a spec's anomalies by kind, as badges worst first (kindsOf).
func foundKinds(as []Anomaly) []htmlKind {
	n := map[Kind]int{}
	for _, a := range as {
		n[a.Kind]++
	}
	var out []htmlKind
	for _, k := range kindsOf(as) {
		out = append(out, newHTMLKind(k, n[k]))
	}
	return out
}

// runKinds are the explanations of the kinds a run's specs found, worst first: report.html
// embeds them, so that every badge links within the page.
func runKinds(r *Run) []Explanation {
	var all []Anomaly
	for _, p := range r.Properties {
		for _, s := range p.Specs {
			all = append(all, s.Anomalies...)
		}
	}
	var out []Explanation
	for _, k := range kindsOf(all) {
		if e, ok := Explain(k); ok {
			out = append(out, e)
		}
	}
	return out
}

// kindBadgeTitle is the tooltip of a kind's badge: unsafe or not, and where it is explained.
func kindBadgeTitle(k htmlKind) string {
	what := "differs from what the target declares"
	if k.Unsafe {
		what = "unsafe"
	}
	if k.Explained {
		return fmt.Sprintf("%s (%s): what it means below", k.Name, what)
	}
	return fmt.Sprintf("%s (%s)", k.Name, what)
}
