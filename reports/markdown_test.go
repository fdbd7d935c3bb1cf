package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renderMarkdown renders r or fails the test.
func renderMarkdown(t *testing.T, r *Run) string {
	t.Helper()
	var b strings.Builder
	if err := RenderMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestMarkdownRows(t *testing.T) {
	got := renderMarkdown(t, sampleRun())
	wants := []string{
		"## retrysafe: FAIL\n",
		"1 of 4 properties violated (1 fail, 1 unknown, 1 pass, 1 skipped).",
		"| property | verdict | specs | time | reason |\n",
		"| replay | pass | 2 pass | 1.2s |  |\n",
		"| race | **FAIL** | 1 fail, 1 pass | 8.1s | leaves exactly one record per round (`duplicate-record`) |\n",
		"| mismatch | unknown | 1 unknown | 3.0s | 2 attempts timed out |\n",
		"| expiry | skipped | - | - | retention 24h exceeds --max-wait 30s |\n",
	}
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, got)
		}
	}
}

func TestMarkdownFailureEvidence(t *testing.T) {
	got := renderMarkdown(t, sampleRun())
	_, sections, ok1 := strings.Cut(got, "### Failures\n")
	failures, unknown, ok2 := strings.Cut(sections, "### Unknown verdicts\n")
	if !ok1 || !ok2 {
		t.Fatalf("no failures and unknown sections:\n%s", got)
	}
	wants := []struct{ in, name, want string }{
		{failures, "heading", "#### 1. race: leaves exactly one record per round\n"},
		{failures, "kinds", "Found: duplicate-record=1"},
		{failures, "failure block", "```text\nround 3: expected 1 record, found 2\n```\n"},
		{failures, "repro block", "```sh\nretrysafe run --target targets/examples/reference.yaml --focus 'race' --seed 42 --key k-fixed\n```\n"},
		{failures, "details", "<details><summary>Evidence: 2 counts, 2 differing paths, 4 attempts</summary>\n\n"},
		{failures, "count row", "| records(orders, alice) | 2 |\n"},
		{failures, "diff path", "- `$.created_at`\n"},
		{failures, "attempt", "Attempt 4 of 4:\n\n```text\n#4 op=create\n< 201 Created\n```\n"},
		{failures, "details end", "</details>\n"},
		{unknown, "unknown spec", "#### 1. mismatch: rejects a variant body\n\n```text\ntimeout after 1s\n```\n"},
	}
	for _, w := range wants {
		if !strings.Contains(w.in, w.want) {
			t.Errorf("%s: summary.md lacks %q:\n%s", w.name, w.want, got)
		}
	}
	if strings.Contains(failures, "mismatch") {
		t.Errorf("the unknown spec is listed among the failures:\n%s", failures)
	}
}

func TestMarkdownEscapesCells(t *testing.T) {
	r := sampleRun()
	r.Properties[3].Reason = "a | b\nc <b>d</b>"
	r.Properties[0].Name = "re*play*"
	got := renderMarkdown(t, r)
	tests := []struct{ name, want string }{
		{"pipe and newline", `| expiry | skipped | - | - | a \| b<br>c \<b\>d\</b\> |` + "\n"},
		{"emphasis", `| re\*play\* | pass |`},
	}
	for _, tt := range tests {
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: summary.md lacks %q:\n%s", tt.name, tt.want, got)
		}
	}
	table, _, _ := strings.Cut(got[strings.Index(got, "| property"):], "\n\n")
	for _, line := range strings.Split(table, "\n") {
		if got := cellCount(line); got != 5 {
			t.Errorf("row has %d cells, want 5: %q", got, line)
		}
	}
}

// cellCount counts the cells of a Markdown table row: the pipes that no
// backslash escapes, less one.
func cellCount(row string) int {
	n := 0
	for i := range len(row) {
		if row[i] == '|' && (i == 0 || row[i-1] != '\\') {
			n++
		}
	}
	return n - 1
}

func TestMarkdownFences(t *testing.T) {
	tests := []struct{ name, attempt, fence string }{
		{"plain", "< 200 OK", "```"},
		{"body with a fence", "< 200 OK\n<\n< ```\n< x\n< ```", "````"},
		{"longer run", "``````", "```````"},
	}
	for _, tt := range tests {
		r := sampleRun()
		r.Properties[1].Specs[1].Evidence.Attempts = []string{tt.attempt}
		got := renderMarkdown(t, r)
		want := tt.fence + "text\n" + tt.attempt + "\n" + tt.fence + "\n"
		if !strings.Contains(got, want) {
			t.Errorf("%s: summary.md lacks %q:\n%s", tt.name, want, got)
		}
	}
}

func TestMarkdownAttemptLimit(t *testing.T) {
	r := sampleRun()
	ev := r.Properties[1].Specs[1].Evidence
	ev.Attempts = make([]string, MarkdownAttempts+2)
	for i := range ev.Attempts {
		ev.Attempts[i] = "attempt"
	}
	got := renderMarkdown(t, r)
	if n := strings.Count(got, "```text\nattempt\n```"); n != MarkdownAttempts {
		t.Errorf("shows %d attempts, want %d", n, MarkdownAttempts)
	}
	if want := "2 more attempts in report.json."; !strings.Contains(got, want) {
		t.Errorf("summary.md lacks %q", want)
	}
}

func TestMarkdownHeadlines(t *testing.T) {
	tests := []struct {
		name string
		run  *Run
		want string
	}{
		{"pass", &Run{Complete: true, Properties: []Property{{Name: "a", Verdict: Pass}, {Name: "b", Verdict: Skipped}}},
			"## retrysafe: PASS\n\nEvery checked property holds (1 of 2 checked) (1 pass, 1 skipped).\n"},
		{"unknown", &Run{Complete: true, Properties: []Property{{Name: "a", Verdict: Unknown}}},
			"## retrysafe: UNKNOWN\n\n1 of 1 properties unknown, no violation found (1 unknown).\n"},
		{"interrupted", &Run{Incomplete: "interrupted", Properties: []Property{{Name: "a", Verdict: Pass}}},
			"## retrysafe: UNKNOWN\n\nRun incomplete (interrupted), no violation found (1 pass).\n"},
	}
	for _, tt := range tests {
		if got := renderMarkdown(t, tt.run); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: summary.md starts\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	if err := WriteMarkdown(path, sampleRun()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := renderMarkdown(t, sampleRun()); string(got) != want {
		t.Errorf("file differs from RenderMarkdown:\n%s", got)
	}
}
