package reports

import (
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// renderHTML renders r with extras or fails the test.
func renderHTML(t *testing.T, r *Run, extras *HTMLExtras) string {
	t.Helper()
	var b strings.Builder
	if err := RenderHTML(&b, r, extras); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// sampleTimeline is two faults among three requests over two seconds.
func sampleTimeline(start time.Time) []TimelineEvent {
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	return []TimelineEvent{
		{at(2000), TimelineRequest, "POST /v1/orders 201", false},
		{at(0), TimelineRequest, "POST /v1/orders 201", false},
		{at(500), TimelineFault, "inject kill (instance 2) <SIGKILL>", true},
		{at(1000), TimelineRequest, "POST /v1/orders (no response)", false},
		{at(1500), TimelineFault, "heal kill (instance 2)", false},
	}
}

func TestHTMLRows(t *testing.T) {
	r := sampleRun()
	r.Properties = append(r.Properties, Property{Name: "odd", Verdict: "bogus"})
	got := renderHTML(t, r, nil)
	wants := []string{
		`<header id="headline" class="headline v-fail" data-verdict="fail">`,
		"<h1>retrysafe: FAIL</h1><p>1 of 5 properties violated (1 fail, 2 unknown, 1 pass, 1 skipped).</p>",
		`<tr id="property-1-replay" class="v-pass" data-property="replay" data-verdict="pass">`,
		`<tr id="property-2-race" class="v-fail" data-property="race" data-verdict="fail">`,
		`<tr id="property-3-mismatch" class="v-unknown" data-property="mismatch" data-verdict="unknown">`,
		`<tr id="property-4-expiry" class="v-skipped" data-property="expiry" data-verdict="skipped">`,
		`<tr id="property-5-odd" class="v-unknown" data-property="odd" data-verdict="unknown">`,
		`<span class="badge v-unknown">unknown (bogus)</span>`,
		`<td class="reason" data-label="reason"><div class="reason-item">retention 24h exceeds --max-wait 30s</div></td>`,
		`<div class="reason-item">leaves exactly one record per round <a class="kind unsafe" data-kind="duplicate-record" href="#kind-duplicate-record"`,
		"<dt>seed</dt><dd><code>42</code></dd>",
	}
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("report.html lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `id="incomplete"`) {
		t.Errorf("complete run marked incomplete")
	}
}

func TestHTMLEvidence(t *testing.T) {
	got := renderHTML(t, sampleRun(), nil)
	_, sections, ok1 := strings.Cut(got, `<section id="failures">`)
	failures, unknown, ok2 := strings.Cut(sections, `<section id="unknown">`)
	if !ok1 || !ok2 {
		t.Fatalf("no failures and unknown sections:\n%s", got)
	}
	wants := []struct{ in, name, want string }{
		{failures, "finding", `<div class="finding v-fail" data-property="race" data-verdict="fail">`},
		{failures, "heading", "<h3>1. race: leaves exactly one record per round</h3>"},
		{failures, "kinds", `<p class="kinds">Found: <span class="found"><a class="kind unsafe" data-kind="duplicate-record" href="#kind-duplicate-record" title="duplicate-record (unsafe): what it means below">duplicate-record</a>&nbsp;×1</span></p>`},
		{failures, "failure", `<pre class="failure">round 3: expected 1 record, found 2</pre>`},
		{failures, "repro", `<pre class="repro">retrysafe run --target targets/examples/reference.yaml --focus &#39;race&#39; --seed 42 --key k-fixed</pre>`},
		{failures, "message", "two requests with key k-fixed were both processed"},
		{failures, "count", `<tr><td>records(orders, alice)</td><td class="num">2</td></tr>`},
		{failures, "diff path", "<li><code>$.created_at</code></li>"},
		{failures, "first attempt open", "<details open><summary>Attempt 1 of 4</summary><pre class=\"attempt\">#1 op=create\n&gt; POST /orders\n&lt; 201 Created</pre>"},
		{failures, "last attempt", "<summary>Attempt 4 of 4</summary>"},
		{unknown, "unknown spec", `<pre class="failure">timeout after 1s</pre>`},
	}
	for _, w := range wants {
		if !strings.Contains(w.in, w.want) {
			t.Errorf("%s: report.html lacks %q:\n%s", w.name, w.want, got)
		}
	}
}

func TestHTMLEscapesEvidence(t *testing.T) {
	r := sampleRun()
	r.Properties[0].Name = `replay"><b>x</b>`
	e := r.Properties[1].Specs[1].Evidence
	e.Attempts = []string{"< 200 OK\n\n<script>alert(1)</script><img src=\"https://evil.example/x.png\">"}
	e.Message = "<!-- comment --> & </pre>"
	got := renderHTML(t, r, nil)
	for _, bad := range []string{"<script", "<img", "<b>x", "<!--", "</pre>\n</pre>"} {
		if strings.Contains(strings.ToLower(got), bad) {
			t.Errorf("report.html contains unescaped %q", bad)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=&#34;https://evil.example/x.png&#34;&gt;",
		"&lt;!-- comment --&gt; &amp; &lt;/pre&gt;",
		`data-property="replay&#34;&gt;&lt;b&gt;x&lt;/b&gt;"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report.html lacks escaped %q", want)
		}
	}
}

// Markup that would make a browser load something. Text from the run is
// escaped, so it holds no '<': only real tags are searched for attributes.
var (
	htmlTag       = regexp.MustCompile(`<[a-zA-Z][^>]*>`)
	fetchingTag   = regexp.MustCompile(`(?i)^<(script|link|iframe|img|object|embed|base|meta\s+http-equiv)\b`)
	fetchingAttr  = regexp.MustCompile(`(?i)\s(?:(src|srcset|action|poster|xlink:href|style)\s*=|href\s*=\s*["']?[^#"'\s])`) // href="#..." stays in the page
	htmlStyle     = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	fetchingStyle = regexp.MustCompile(`(?i)url\(|@import`)
)

// fetches returns the first piece of markup in page that would load a resource.
func fetches(page string) string {
	for _, tag := range htmlTag.FindAllString(page, -1) {
		if fetchingTag.MatchString(tag) || fetchingAttr.MatchString(tag) {
			return tag
		}
	}
	for _, m := range htmlStyle.FindAllStringSubmatch(page, -1) {
		if s := fetchingStyle.FindString(m[1]); s != "" {
			return s
		}
	}
	return ""
}

func TestHTMLSelfContained(t *testing.T) {
	r := sampleRun()
	r.Properties[1].Specs[1].Evidence.Attempts = []string{`<link rel="stylesheet" href="http://cdn.example/x.css"> url(https://x.example/)`}
	extras := &HTMLExtras{
		LoadPlotHTML: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><path d="M0 0L10 10"/></svg>`,
		Timeline:     sampleTimeline(r.Started),
	}
	got := renderHTML(t, r, extras)
	for _, bad := range []string{`<img src="x.png">`, `<svg><image xlink:href="p.png"/></svg>`, `<style>a{background:url(x)}</style>`} {
		if fetches(bad) == "" {
			t.Fatalf("fetches(%q) found nothing", bad)
		}
	}
	if m := fetches(got); m != "" {
		t.Errorf("report.html may fetch a resource: %q", m)
	}
	if !strings.Contains(got, `<section id="load"><h2>Load latency</h2><svg xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("load plot not inserted as is:\n%s", got)
	}
}

func TestHTMLRefusesNetworkPlot(t *testing.T) {
	plots := []string{
		`<img src="https://example.com/plot.png">`,
		`<svg><image href='//example.com/p.png'/></svg>`,
		`<div style="background: url( http://example.com/p.png)"></div>`,
		`<style>@import "x.css";</style>`,
		// as cmd/retrysafe embeds the plot: escaped inside an iframe's srcdoc
		`<iframe srcdoc="` + html.EscapeString(`<script src="https://example.com/plot.js"></script>`) + `"></iframe>`,
	}
	for _, plot := range plots {
		err := RenderHTML(&strings.Builder{}, sampleRun(), &HTMLExtras{LoadPlotHTML: plot})
		if !errors.Is(err, ErrNetworkReference) {
			t.Errorf("RenderHTML with plot %q: err = %v, want ErrNetworkReference", plot, err)
		}
	}
}

func TestHTMLTimeline(t *testing.T) {
	r := sampleRun()
	got := renderHTML(t, r, &HTMLExtras{Timeline: sampleTimeline(r.Started)})
	_, section, ok := strings.Cut(got, `<section id="timeline">`)
	if !ok {
		t.Fatalf("no timeline section:\n%s", got)
	}
	tests := []struct {
		name, want string
		n          int
	}{
		{"summary", "<p>2 fault events (1 injected) against 3 requests over 2.0s.</p>", 1},
		{"svg", `<svg role="img"`, 1},
		{"fault marks", `class="mark-fault"`, 2},
		{"request marks", `class="mark-request"`, 3},
		{"first request at the left end", `<rect class="mark-request" x="80" y="54"`, 1},
		{"last request at the right end", `<rect class="mark-request" x="928" y="54"`, 1},
		{"fault lane", `<rect class="mark-fault" x="292" y="14"`, 1},
		{"escaped fault title", "<title>&#43;500ms inject kill (instance 2) &lt;SIGKILL&gt;</title>", 1},
		{"axis end", ">+2.0s</text>", 1},
		{"fault list", `<td class="num">+1.5s</td><td>heal kill (instance 2)</td>`, 1},
	}
	for _, tt := range tests {
		if n := strings.Count(section, tt.want); n != tt.n {
			t.Errorf("%s: %q occurs %d times, want %d:\n%s", tt.name, tt.want, n, tt.n, section)
		}
	}
}

func TestHTMLTimelineSharesColumns(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var events []TimelineEvent
	for i := range 10000 {
		events = append(events, TimelineEvent{start.Add(time.Duration(i) * time.Millisecond), TimelineRequest, "POST", false})
	}
	tl := newTimeline(events)
	if tl.Requests != 10000 || len(tl.Marks) > tl.PlotW+1 {
		t.Fatalf("10000 requests: %d counted, %d marks; want 10000 and at most %d marks", tl.Requests, len(tl.Marks), tl.PlotW+1)
	}
	total := 0
	for _, m := range tl.Marks {
		total += m.Count
	}
	if total != 10000 {
		t.Errorf("marks count %d requests, want 10000", total)
	}
}

func TestHTMLOptionalSections(t *testing.T) {
	r := sampleRun()
	r.Complete, r.Incomplete = false, "interrupted"
	got := renderHTML(t, r, nil)
	for _, absent := range []string{`id="timeline"`, `id="load"`} {
		if strings.Contains(got, absent) {
			t.Errorf("report.html without extras has %s", absent)
		}
	}
	for _, want := range []string{
		`<p class="incomplete" id="incomplete"><strong>Incomplete:</strong> interrupted</p>`,
		`<table data-property="race"><thead><tr><th>figure</th><th>value</th></tr></thead><tbody><tr><td>arrival_spread_p50</td><td class="num">1.2ms</td></tr>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report.html lacks %q:\n%s", want, got)
		}
	}
	if got := renderHTML(t, &Run{Complete: true}, nil); !strings.Contains(got, "<p>No property was selected.</p>") {
		t.Errorf("empty run:\n%s", got)
	}
}

func TestWriteHTML(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	path := filepath.Join(dir, "report.html")
	if err := WriteHTML(path, sampleRun(), nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "<!DOCTYPE html>") {
		t.Errorf("report.html starts with %q", got[:min(len(got), 40)])
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("report folder holds %d entries, want only report.html", len(entries))
	}
}

func TestHTMLClientTimeline(t *testing.T) {
	r := sampleRun()
	at := func(ms int) time.Time { return r.Started.Add(time.Duration(ms) * time.Millisecond) }
	tl := ClientTimeline{Title: "backoff sdk: backs off <fast>", Ops: []ClientLane{
		{Label: "r-1 | 100", Attempts: []ClientMark{{at(0), at(1), "503", "k1", false}, {at(101), at(102), "success", "k1", false}}},
		{Label: "r-2 | 100", Attempts: []ClientMark{{at(200), at(1000), "held", "k2", false}, {at(1200), at(1201), "replay", "k2", true}}},
	}}
	got := renderHTML(t, r, &HTMLExtras{ClientTimelines: []ClientTimeline{tl}})
	_, section, ok := strings.Cut(got, `<section id="client-timelines">`)
	if !ok {
		t.Fatalf("no client timelines section:\n%s", got)
	}
	tests := []struct {
		name, want string
		n          int
	}{
		{"escaped title", "<h3>backoff sdk: backs off &lt;fast&gt;</h3>", 1},
		{"a bar per attempt", `class="attempt"`, 4},
		{"a 503 in red", `fill="#c62828"`, 1},
		{"successes and replays in green", `fill="#1a7f37"`, 2},
		{"the first attempt at the left end", `<rect class="attempt" x="210" y="0"`, 1},
		{"a delay per retry", `stroke-dasharray="3 2"`, 2},
		{"the delay written", ">100ms</text>", 1},
		{"the restart said", "(after the client&#39;s restart)", 1},
		{"axis end", ">+1.2s</text>", 1},
	}
	for _, tt := range tests {
		if n := strings.Count(section, tt.want); n != tt.n {
			t.Errorf("%s: %q occurs %d times, want %d:\n%s", tt.name, tt.want, n, tt.n, section)
		}
	}
	if strings.Contains(renderHTML(t, r, nil), "client-timelines") {
		t.Errorf("a run without client scenarios draws client timelines")
	}
}
