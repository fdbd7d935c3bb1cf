package reports

import (
	"fmt"
	"io"
	"strings"
)

// MarkdownAttempts is how many attempt transcripts summary.md shows for each
// failing or unknown spec; report.json holds them all.
const MarkdownAttempts = 5

// WriteMarkdown writes summary.md (see RenderMarkdown) to path, creating the
// directory if needed and replacing the file atomically.
func WriteMarkdown(path string, r *Run) error {
	return writeFile(path, func(w io.Writer) error { return RenderMarkdown(w, r) })
}

// RenderMarkdown writes the run as Markdown for a CI job summary (GitHub's
// $GITHUB_STEP_SUMMARY, a GitLab report): a headline verdict in words, a
// table property | verdict | specs | time | reason, then a section for the
// failing specs and one for the unknown ones, each with its failure message,
// its repro command in a code block and its evidence in a <details> block.
// Text from the target is escaped, so a pipe or a newline cannot break the
// table and a response body cannot inject markup.
func RenderMarkdown(w io.Writer, r *Run) error {
	var b strings.Builder
	mark, text := headline(r)
	fmt.Fprintf(&b, "## retrysafe: %s\n\n", mark)
	text = strings.ToUpper(text[:1]) + text[1:] // headline texts start in ASCII
	fmt.Fprintf(&b, "%s (%s).\n\n", mdText(text), countsText(r.Counts()))
	if facts := runFacts(r); len(facts) > 0 {
		parts := make([]string, len(facts))
		for i, f := range facts {
			parts[i] = f[0] + " " + mdCode(f[1])
		}
		b.WriteString(strings.Join(parts, ", ") + "\n\n")
	}
	if !r.Complete {
		fmt.Fprintf(&b, "> **Incomplete:** %s\n\n", mdText(orDash(r.Incomplete)))
	}
	for _, c := range r.Causes {
		fmt.Fprintf(&b, "> %s\n\n", mdText(c.Sentence()))
	}
	mdTable(&b, r)
	mdFindings(&b, "Failures", findings(r, Fail))
	mdFindings(&b, "Unknown verdicts", findings(r, Unknown))
	mdObservations(&b, observations(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// mdTable writes one row per property.
func mdTable(b *strings.Builder, r *Run) {
	if len(r.Properties) == 0 {
		return
	}
	b.WriteString("| property | verdict | specs | time | reason |\n")
	b.WriteString("| --- | --- | --- | ---: | --- |\n")
	for i := range r.Properties {
		p := &r.Properties[i]
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n",
			mdText(p.Name), mdVerdict(p.Verdict), mdText(countsText(p.Counts())),
			fmtDuration(p.Duration), mdReasons(p))
	}
	b.WriteString("\n")
}

// mdObservations lists what each spec exercised, passing specs included.
func mdObservations(b *strings.Builder, os []observation) {
	if len(os) == 0 {
		return
	}
	b.WriteString("### What the specs exercised\n\n")
	for _, o := range os {
		fmt.Fprintf(b, "- **%s**: %s (%s): %s\n", mdText(o.Property), mdText(o.Spec), o.Verdict, mdText(o.Text))
	}
	b.WriteString("\n")
}

// mdVerdict marks a verdict in words; a failure stands out in bold.
func mdVerdict(v Verdict) string {
	switch v {
	case Fail:
		return "**FAIL**"
	case Pass, Unknown, Skipped:
		return string(v)
	}
	return "unknown (" + mdText(string(v)) + ")"
}

// mdFindings writes a section with one entry per finding.
func mdFindings(b *strings.Builder, title string, fs []finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "### %s\n\n", title)
	for _, f := range fs {
		fmt.Fprintf(b, "#### %d. %s: %s\n\n", f.N, mdText(f.Property.Name), mdText(f.Spec.Text))
		if len(f.Spec.Anomalies) > 0 {
			fmt.Fprintf(b, "Found: %s\n\n", mdText(KindCounts(f.Spec.Anomalies)))
		}
		if f.Spec.Failure != "" {
			mdBlock(b, "text", f.Spec.Failure)
		}
		if e := f.Spec.Evidence; e != nil {
			if e.Repro != "" {
				b.WriteString("Reproduce:\n\n")
				mdBlock(b, "sh", e.Repro)
			}
			mdEvidence(b, e)
		}
	}
}

// mdEvidence writes the evidence in a <details> block: message, counts,
// differing paths and the first attempts.
func mdEvidence(b *strings.Builder, e *Evidence) {
	if e.Message == "" && len(e.Counts) == 0 && len(e.DiffPaths) == 0 && len(e.Attempts) == 0 {
		return
	}
	fmt.Fprintf(b, "<details><summary>Evidence: %s</summary>\n\n", evidenceSummary(e))
	if e.Message != "" {
		fmt.Fprintf(b, "%s\n\n", mdText(e.Message))
	}
	if len(e.Counts) > 0 {
		b.WriteString("| counted | n |\n| --- | ---: |\n")
		for _, k := range sortedKeys(e.Counts) {
			fmt.Fprintf(b, "| %s | %d |\n", mdText(k), e.Counts[k])
		}
		b.WriteString("\n")
	}
	if len(e.DiffPaths) > 0 {
		b.WriteString("Differing JSON paths:\n\n")
		for _, p := range e.DiffPaths {
			fmt.Fprintf(b, "- %s\n", mdCode(p))
		}
		b.WriteString("\n")
	}
	for i, a := range e.Attempts {
		if i == MarkdownAttempts {
			fmt.Fprintf(b, "%d more attempts in report.json.\n\n", len(e.Attempts)-i)
			break
		}
		fmt.Fprintf(b, "Attempt %d of %d:\n\n", i+1, len(e.Attempts))
		mdBlock(b, "text", clip(a, maxAttemptChars))
	}
	b.WriteString("</details>\n\n")
}

// evidenceSummary says what an evidence block holds, e.g.
// "2 counts, 1 differing path, 16 attempts".
func evidenceSummary(e *Evidence) string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(len(e.Counts), "count", "counts")
	add(len(e.DiffPaths), "differing path", "differing paths")
	add(len(e.Attempts), "attempt", "attempts")
	if len(parts) == 0 {
		return "message"
	}
	return strings.Join(parts, ", ")
}

// mdSpecial are the characters that Markdown or HTML could read as markup.
const mdSpecial = "\\`*_[]<>|~&#"

// mdText escapes s for a table cell or a line of text: markup characters
// are backslash-escaped (a pipe cannot end a cell) and line breaks become
// <br>, so that one value stays in one cell.
func mdText(s string) string {
	var b strings.Builder
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			b.WriteString("<br>")
		case r == '\t':
			b.WriteByte(' ')
		case strings.ContainsRune(mdSpecial, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode renders s as one inline code span, whatever backticks it holds.
func mdCode(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdBlock writes s as a fenced code block whose fence is longer than any
// run of backticks in s.
func mdBlock(b *strings.Builder, lang, s string) {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	fmt.Fprintf(b, "%s%s\n%s\n%s\n\n", fence, lang, strings.TrimRight(s, "\n"), fence)
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
