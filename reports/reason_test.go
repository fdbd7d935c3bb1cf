package reports

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// longReasonRun is sampleRun with a skip reason of about 400 characters and a failing property
// whose two failing specs found three kinds.
func longReasonRun() (*Run, string) {
	r := sampleRun()
	long := strings.Repeat("the consumer declares a downstream binding that holds its effect, ", 6) + "end-of-reason"
	r.Properties[3].Reason = long
	r.Properties = append(r.Properties, Property{Name: "crash-after-ack", Verdict: Fail, Specs: []Spec{
		{Text: "amqp: kill after the ack", Verdict: Fail, Anomalies: []Anomaly{{Kind: KindServerError}, {Kind: KindDroppedEvent}, {Kind: KindServerError}}},
		{Text: "nats: kill after the ack", Verdict: Fail, Anomalies: []Anomaly{{Kind: KindChainLostEffect}}},
		{Text: "webhook: passes", Verdict: Pass},
	}})
	return r, long
}

// TestTableReasonWraps: the terminal's reason column is wrapped at spaces under its own column,
// never cut, and names the kinds behind each reason.
func TestTableReasonWraps(t *testing.T) {
	r, long := longReasonRun()
	out := renderTable(r)
	table, _, _ := strings.Cut(out, "\n\n")
	lines := strings.Split(table, "\n")
	col := strings.Index(lines[0], "REASON")
	var reason []string
	inExpiry := false
	for _, l := range lines {
		if utf8.RuneCountInString(l) > TableWidth {
			t.Errorf("line of %d columns, over %d: %q", utf8.RuneCountInString(l), TableWidth, l)
		}
		switch {
		case strings.HasPrefix(l, "expiry "):
			inExpiry = true
			reason = append(reason, l[col:])
		case inExpiry && strings.TrimSpace(l[:min(col, len(l))]) == "":
			reason = append(reason, l[col:])
		default:
			inExpiry = false
		}
	}
	if len(reason) < 3 {
		t.Fatalf("the long reason is on %d lines, want it wrapped over several:\n%s", len(reason), table)
	}
	if got := strings.Join(reason, " "); got != long {
		t.Errorf("the wrapped reason, joined again, is\n%q\nwant\n%q", got, long)
	}
	want := "crash-after-ack  FAIL     2 fail, 1 pass  -     amqp: kill after the ack [dropped-event, server-error]; nats: kill after the ack [chain-lost-effect]"
	if joined := strings.Join(strings.Fields(table), " "); !strings.Contains(joined, strings.Join(strings.Fields(want), " ")) {
		t.Errorf("table lacks %q:\n%s", want, table)
	}
}

func TestWrapWords(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"one two three", 7, []string{"one two", "three"}},
		{"a https://example.invalid/a-very-long-url b", 10, []string{"a", "https://example.invalid/a-very-long-url", "b"}},
		{"dürüm kebab", 5, []string{"dürüm", "kebab"}},
	} {
		if got := WrapWords(tc.in, tc.width); !slices.Equal(got, tc.want) {
			t.Errorf("WrapWords(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestMarkdownReasonWhole: summary.md keeps the whole reason (the renderer wraps it) and
// shows each reason's kinds.
func TestMarkdownReasonWhole(t *testing.T) {
	r, long := longReasonRun()
	var b strings.Builder
	if err := RenderMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"| expiry | skipped | - | - | " + long + " |\n",
		"| crash-after-ack | **FAIL** | 2 fail, 1 pass | - | amqp: kill after the ack (`dropped-event`, `server-error`)<br>nats: kill after the ack (`chain-lost-effect`) |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "more characters") {
		t.Errorf("summary.md cuts a reason:\n%s", got)
	}
}

// TestHTMLKindsExplained: report.html shows each reason's kinds as badges, each a link to the
// explanation the page embeds (only of the kinds it shows), and links nowhere else.
func TestHTMLKindsExplained(t *testing.T) {
	r, long := longReasonRun()
	got := renderHTML(t, r, nil)
	if !strings.Contains(got, "<div class=\"reason-item\">"+long+"</div>") {
		t.Errorf("report.html does not hold the whole reason")
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`\sid="([^"]+)"`).FindAllStringSubmatch(got, -1) {
		ids[m[1]] = true
	}
	links := regexp.MustCompile(`\shref="([^"]*)"`).FindAllStringSubmatch(got, -1)
	if len(links) == 0 {
		t.Fatal("report.html links to no explanation")
	}
	for _, m := range links {
		if !strings.HasPrefix(m[1], "#") || !ids[m[1][1:]] {
			t.Errorf("link %q does not lead to an element of the page", m[1])
		}
	}
	var explained []string
	for _, m := range regexp.MustCompile(`<div class="kind-explanation[^"]*" id="kind-([^"]+)"`).FindAllStringSubmatch(got, -1) {
		explained = append(explained, m[1])
	}
	want := []string{"duplicate-record", "dropped-event", "chain-lost-effect", "server-error"} // unsafe first, then Kinds order
	if !slices.Equal(explained, want) {
		t.Errorf("explained kinds %v, want those the run found, worst first: %v", explained, want)
	}
	e, _ := Explain(KindDroppedEvent)
	if !strings.Contains(got, "<p>"+e.Meaning+"</p>") {
		t.Errorf("the explanation of dropped-event lacks its meaning")
	}
	if strings.Contains(renderHTML(t, &Run{Complete: true, Properties: []Property{{Name: "replay", Verdict: Pass}}}, nil), `id="kinds"`) {
		t.Error("a run without anomalies has a section of kinds")
	}
}
