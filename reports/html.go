package reports

import (
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// HTMLAttempts is how many attempt transcripts report.html shows for each
// failing or unknown spec; report.json holds them all.
const HTMLAttempts = 20

// The kinds of a TimelineEvent.
const (
	TimelineFault   = "fault"
	TimelineRequest = "request"
)

// HTMLExtras are the parts of report.html that report.json does not hold,
// produced by the load and fault engines. The zero value (or nil) adds none.
type HTMLExtras struct {
	// LoadPlotHTML is the load latency plot: an inline SVG or HTML fragment,
	// inserted as is (it is trusted, not escaped). It must be self-contained:
	// RenderHTML refuses a fragment that references a network resource.
	LoadPlotHTML string
	// Timeline holds the injected faults and the requests of the run, in
	// any order; report.html draws them on one time axis.
	Timeline []TimelineEvent
	// ClientTimelines are the client properties' scenarios, each drawn as its operations'
	// attempts and the delays between them.
	ClientTimelines []ClientTimeline
}

// TimelineEvent is one point of the fault timeline.
type TimelineEvent struct {
	// Time is when it happened.
	Time time.Time
	// Kind is TimelineFault or TimelineRequest; any other kind is drawn as
	// a request.
	Kind string
	// Label says what happened, e.g. "kill instance 2" or "POST /v1/orders 201".
	Label string
	// Injected marks a fault the run injected (not its heal, nor what the run only observed),
	// for the count of injected faults.
	Injected bool
}

// ErrNetworkReference is returned by RenderHTML for a LoadPlotHTML fragment
// that would make report.html fetch something from the network.
var ErrNetworkReference = errors.New("load plot references a network resource; report.html must be self-contained")

// networkRef matches an attribute or CSS reference to another host:
// src="https://...", href='//...', url(http://...), @import.
var networkRef = regexp.MustCompile(`(?i)((src|href|action|poster|srcset)\s*=\s*["']?\s*(https?:)?//)|(url\(\s*["']?\s*(https?:)?//)|@import`)

// WriteHTML writes report.html (see RenderHTML) to path, creating the
// directory if needed and replacing the file atomically.
func WriteHTML(path string, r *Run, extras *HTMLExtras) error {
	return writeFile(path, func(w io.Writer) error { return RenderHTML(w, r, extras) })
}

// RenderHTML writes the run as one self-contained HTML page (inline CSS, no
// script, nothing fetched): the headline verdict, the run's facts, a table
// with one row per property (<tr data-property="NAME" data-verdict="V">),
// the evidence of each failing and each unknown spec, the properties'
// figures, and, when extras hold them, the load latency plot, a timeline
// of injected faults against requests and each client scenario's attempts. Every anomaly kind
// the page shows (beside each reason of the table, and in each failure) is a badge that links to
// its explanation, embedded at the end (<section id="kinds">, <div id="kind-NAME">); a phone's
// narrow screen gets the table as one card per property. Everything from the run is escaped,
// so a response body cannot inject markup. extras may be nil.
func RenderHTML(w io.Writer, r *Run, extras *HTMLExtras) error {
	if extras == nil {
		extras = &HTMLExtras{}
	}
	// Unescaped first: the plot may sit escaped in an iframe's srcdoc, where the browser
	// unescapes and loads it.
	if networkRef.MatchString(html.UnescapeString(extras.LoadPlotHTML)) {
		return ErrNetworkReference
	}
	mark, text := headline(r)
	page := htmlPage{
		Mark: mark, Text: strings.ToUpper(text[:1]) + text[1:], Counts: countsText(r.Counts()),
		Verdict: normal(r.Verdict()), Complete: r.Complete, Incomplete: orDash(r.Incomplete),
		Facts: runFacts(r), Profile: r.Target.Profile, Rows: htmlRows(r),
		Sections: []htmlSection{
			{"failures", "Failures", Fail, findings(r, Fail)},
			{"unknown", "Unknown verdicts", Unknown, findings(r, Unknown)},
		},
		LoadPlot: template.HTML(extras.LoadPlotHTML), Timeline: newTimeline(extras.Timeline),
		Clients: newClientTimelines(extras.ClientTimelines), Causes: r.Causes, Kinds: runKinds(r),
		Observed: observations(r),
	}
	for i := range r.Properties {
		if len(r.Properties[i].Figures) > 0 {
			page.Figures = append(page.Figures, &r.Properties[i])
		}
	}
	return htmlTemplate.Execute(w, page)
}

// htmlPage is what the template renders.
type htmlPage struct {
	Mark, Text, Counts string
	Verdict            Verdict
	Complete           bool
	Incomplete         string
	Facts              [][2]string
	Profile            map[string]string
	Rows               []htmlRow
	Sections           []htmlSection
	Figures            []*Property
	LoadPlot           template.HTML
	Timeline           *timeline
	Clients            []clientTimeline
	Causes             []Cause
	Kinds              []Explanation // the kinds the page shows, explained
	Observed           []observation // what each spec exercised, passing specs included
}

// htmlSection lists the failing or the unknown specs with their evidence.
type htmlSection struct {
	ID, Title string
	Verdict   Verdict
	List      []finding
}

// htmlRow is one property's row of the verdict table.
type htmlRow struct {
	ID, Name, Must, VerdictText, Specs, Time string
	Verdict                                  Verdict
	Reasons                                  []htmlReason
}

// htmlRows returns one row per property, in run order.
func htmlRows(r *Run) []htmlRow {
	rows := make([]htmlRow, len(r.Properties))
	for i := range r.Properties {
		p := &r.Properties[i]
		text := string(p.Verdict)
		if !p.Verdict.Valid() {
			text = fmt.Sprintf("unknown (%s)", p.Verdict)
		}
		rows[i] = htmlRow{
			ID: fmt.Sprintf("property-%d-%s", i+1, slug(p.Name)), Name: p.Name, Must: p.Must,
			Verdict: normal(p.Verdict), VerdictText: text, Specs: countsText(p.Counts()),
			Time: fmtDuration(p.Duration), Reasons: htmlReasons(p),
		}
	}
	return rows
}

// slug keeps the letters, digits, '-' and '_' of s, for an id attribute.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, s)
}

// htmlAttempt is one attempt transcript as report.html shows it.
type htmlAttempt struct {
	N, Of int
	Text  string
}

// htmlAttempts returns the first HTMLAttempts transcripts, clipped.
func htmlAttempts(e *Evidence) []htmlAttempt {
	var out []htmlAttempt
	for i, a := range e.Attempts[:min(len(e.Attempts), HTMLAttempts)] {
		out = append(out, htmlAttempt{i + 1, len(e.Attempts), clip(a, maxAttemptChars)})
	}
	return out
}

// Geometry of the timeline SVG, in pixels.
const (
	tlWidth, tlHeight = 960, 124
	tlLeft, tlRight   = 80, 32
	tlFaultY, tlReqY  = 14, 54 // tops of the two lanes
	tlLaneH, tlAxisY  = 32, 96
	tlTicks           = 5
)

// timeline is the fault timeline, laid out for the template.
type timeline struct {
	Width, Height, Left, Right, PlotW int
	AxisY                             int
	FaultY, ReqY, LaneH               int
	Span                              string
	Faults, Injected, Requests        int
	Ticks                             []tlTick
	Marks                             []tlMark
	FaultList                         []tlFault
}

// tlTick is one labelled tick of the time axis.
type tlTick struct {
	X     float64
	Label string
}

// tlMark is one mark in a lane; events in the same pixel column of the same
// lane share a mark.
type tlMark struct {
	X, Y  float64
	Fault bool
	Count int
	Title string
}

// tlFault is one row of the list of faults under the timeline.
type tlFault struct {
	At, Label string
}

// newTimeline lays the events out on one time axis, from the first event to
// the last; nil when there are none.
func newTimeline(events []TimelineEvent) *timeline {
	if len(events) == 0 {
		return nil
	}
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b TimelineEvent) int { return a.Time.Compare(b.Time) })
	t0, span := evs[0].Time, evs[len(evs)-1].Time.Sub(evs[0].Time)
	tl := &timeline{Width: tlWidth, Height: tlHeight, Left: tlLeft, Right: tlWidth - tlRight,
		PlotW: tlWidth - tlLeft - tlRight, AxisY: tlAxisY, FaultY: tlFaultY, ReqY: tlReqY,
		LaneH: tlLaneH, Span: fmtOffset(span)}
	if span <= 0 {
		span = time.Second // one instant: draw it at the left end of a 1s axis
	}
	x := func(d time.Duration) float64 {
		return math.Round(10*(tlLeft+float64(tl.PlotW)*float64(d)/float64(span))) / 10
	}
	for i := 0; i <= tlTicks; i++ {
		d := span * time.Duration(i) / tlTicks
		tl.Ticks = append(tl.Ticks, tlTick{x(d), fmtOffset(d)})
	}
	type column struct {
		fault bool
		px    int
	}
	index := make(map[column]int)
	for _, e := range evs {
		fault := e.Kind == TimelineFault
		at := e.Time.Sub(t0)
		if fault {
			tl.Faults++
			if e.Injected {
				tl.Injected++
			}
			tl.FaultList = append(tl.FaultList, tlFault{fmtOffset(at), e.Label})
		} else {
			tl.Requests++
		}
		c := column{fault, int(x(at))}
		if i, ok := index[c]; ok {
			tl.Marks[i].Count++
			continue
		}
		y := float64(tlReqY)
		if fault {
			y = tlFaultY
		}
		index[c] = len(tl.Marks)
		tl.Marks = append(tl.Marks, tlMark{X: float64(c.px), Y: y, Fault: fault, Count: 1,
			Title: "+" + fmtOffset(at) + " " + e.Label})
	}
	for i := range tl.Marks {
		if n := tl.Marks[i].Count; n > 1 {
			tl.Marks[i].Title += fmt.Sprintf(" (and %d more)", n-1)
		}
	}
	return tl
}

// fmtOffset shows an offset from the start of the timeline.
func fmtOffset(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return fmtDuration(d)
}

var htmlTemplate = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"attempts": htmlAttempts,
	"hidden":   func(e *Evidence) int { return max(0, len(e.Attempts)-HTMLAttempts) },
	"add":      func(a, b int) int { return a + b },
	"addf":     func(a, b float64) float64 { return a + b },
	"found":    foundKinds,
	"title":    kindBadgeTitle,
}).Parse(htmlSource + kindsSource + clientTimelineSource))

// htmlSource is the template of report.html. It loads nothing: styles are
// inline and there is no script.
const htmlSource = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>retrysafe: {{.Mark}}</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2329;margin:0 auto;max-width:1100px;padding:0 20px 40px}
h1{margin:0;font-size:26px}h2{margin-top:32px;border-bottom:1px solid #d8dde3;padding-bottom:4px}h3{font-size:16px;margin:22px 0 6px}
.headline{border-radius:6px;padding:16px 20px;margin:20px 0;color:#fff}.headline p{margin:4px 0 0}
.headline.v-pass{background:#1a7f37}.headline.v-fail{background:#c62828}.headline.v-unknown{background:#9a6700}.headline.v-skipped{background:#57606a}
.incomplete{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;border-radius:4px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}dt{color:#57606a}dd{margin:0}
table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid #d8dde3;padding:5px 9px;text-align:left;vertical-align:top}
th{background:#f3f5f7}td.num{text-align:right}.must{color:#57606a;font-size:13px}
.badge{display:inline-block;border-radius:10px;padding:0 9px;font-weight:600;font-size:13px;color:#fff}
.v-pass .badge,.badge.v-pass{background:#1a7f37}.badge.v-fail{background:#c62828}.badge.v-unknown{background:#9a6700}.badge.v-skipped{background:#8c959f}
tr.v-fail{background:#fff0f0}tr.v-unknown{background:#fffbe6}
pre{background:#f6f8fa;border:1px solid #d8dde3;border-radius:4px;padding:8px 10px;overflow-x:auto;white-space:pre-wrap;word-break:break-word;font-size:13px}
pre.repro{background:#1d2329;color:#e6edf3}.finding{border-left:4px solid #c62828;padding-left:14px}.finding.v-unknown{border-left-color:#9a6700}
summary{cursor:pointer;color:#0b57d0}svg text{font:12px system-ui,sans-serif;fill:#444}
dd,td,th,h3,p,li{overflow-wrap:break-word}td.reason,dd{overflow-wrap:anywhere}
#properties{width:100%}#properties td.reason{min-width:12em}#properties td:nth-child(2),#properties td:nth-child(3),#properties td:nth-child(4){white-space:nowrap}.reason-item+.reason-item{margin-top:4px}
a.kind{display:inline-block;max-width:100%;border-radius:4px;padding:0 6px;margin:1px 0;font:12px/1.6 ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef1f4;color:#1d2329;border:1px solid #c9d1d9;text-decoration:none;overflow-wrap:anywhere;vertical-align:baseline}
a.kind.unsafe{background:#ffebe9;border-color:#ff8182;color:#82071e}a.kind:hover{text-decoration:underline}
.kind-explanation{border-left:4px solid #c9d1d9;padding-left:14px;margin:14px 0}.kind-explanation.unsafe{border-left-color:#c62828}
.kind-explanation:target{background:#fff8c5}.found{white-space:nowrap}#load svg,#load iframe{max-width:100%;height:auto}
@media (max-width:700px){body{padding:0 10px 30px}#properties,#properties tbody,#properties tr,#properties td{display:block;width:auto}
#properties thead{display:none}#properties tr{border:1px solid #d8dde3;border-radius:4px;margin:0 0 10px;padding:4px 0}
#properties td{border:0;padding:3px 10px}#properties td.num{text-align:left}#properties td.reason{min-width:0}
#properties td[data-label]::before{content:attr(data-label) ": ";color:#57606a}
dl.facts{grid-template-columns:1fr}dd{margin-bottom:4px}}
</style></head>
<body>
<header id="headline" class="headline v-{{.Verdict}}" data-verdict="{{.Verdict}}">
<h1>retrysafe: {{.Mark}}</h1><p>{{.Text}} ({{.Counts}}).</p></header>
{{if not .Complete}}<p class="incomplete" id="incomplete"><strong>Incomplete:</strong> {{.Incomplete}}</p>{{end}}
{{with .Facts}}<dl class="facts" id="facts">{{range .}}<dt>{{index . 0}}</dt><dd><code>{{index . 1}}</code></dd>{{end}}</dl>{{end}}
{{with .Profile}}<details><summary>Idempotency profile</summary><table>{{range $k, $v := .}}<tr><td>{{$k}}</td><td><code>{{$v}}</code></td></tr>{{end}}</table></details>{{end}}
{{range .Causes}}<p class="cause">{{.Sentence}}</p>
{{end}}<h2>Properties</h2>
{{if .Rows}}<table id="properties"><thead><tr><th>property</th><th>verdict</th><th>specs</th><th>time</th><th>reason</th></tr></thead><tbody>
{{range .Rows}}<tr id="{{.ID}}" class="v-{{.Verdict}}" data-property="{{.Name}}" data-verdict="{{.Verdict}}">
<td><strong>{{.Name}}</strong>{{with .Must}}<div class="must">MUST: {{.}}</div>{{end}}</td>
<td><span class="badge v-{{.Verdict}}">{{.VerdictText}}</span></td><td data-label="specs">{{.Specs}}</td><td class="num" data-label="time">{{.Time}}</td>
<td class="reason"{{if .Reasons}} data-label="reason"{{end}}>{{range .Reasons}}<div class="reason-item">{{.Text}}{{range .Kinds}} {{template "kind" .}}{{end}}</div>{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<p>No property was selected.</p>{{end}}
{{range .Sections}}{{template "findings" .}}{{end}}
{{with .Observed}}<section id="observed"><h2>What the specs exercised</h2><ul>{{range .}}
<li class="v-{{.Verdict}}" data-property="{{.Property}}"><strong>{{.Property}}</strong>: {{.Spec}} (<span class="badge v-{{.Verdict}}">{{.Verdict}}</span>): {{.Text}}</li>{{end}}</ul></section>{{end}}
{{with .Figures}}<section id="figures"><h2>Figures</h2>{{range .}}<h3>{{.Name}}</h3>
<table data-property="{{.Name}}"><thead><tr><th>figure</th><th>value</th></tr></thead><tbody>{{range $k, $v := .Figures}}<tr><td>{{$k}}</td><td class="num">{{$v}}</td></tr>{{end}}</tbody></table>{{end}}</section>{{end}}
{{with .LoadPlot}}<section id="load"><h2>Load latency</h2>{{.}}</section>{{end}}
{{with .Timeline}}<section id="timeline"><h2>Faults and requests</h2>
<p>{{.Faults}} fault events ({{.Injected}} injected) against {{.Requests}} requests over {{.Span}}.</p>
<svg role="img" aria-label="timeline of injected faults against requests" width="100%" viewBox="0 0 {{.Width}} {{.Height}}">
<rect x="{{.Left}}" y="{{.FaultY}}" width="{{.PlotW}}" height="{{.LaneH}}" fill="#fdf0f0"/>
<rect x="{{.Left}}" y="{{.ReqY}}" width="{{.PlotW}}" height="{{.LaneH}}" fill="#eef4fc"/>
<text x="4" y="{{add .FaultY 20}}">faults</text><text x="4" y="{{add .ReqY 20}}">requests</text>
<line x1="{{.Left}}" y1="{{.AxisY}}" x2="{{.Right}}" y2="{{.AxisY}}" stroke="#444"/>
{{range .Ticks}}<line x1="{{.X}}" y1="{{$.Timeline.AxisY}}" x2="{{.X}}" y2="{{add $.Timeline.AxisY 5}}" stroke="#444"/><text x="{{.X}}" y="{{add $.Timeline.AxisY 18}}" text-anchor="middle">+{{.Label}}</text>
{{end}}{{range .Marks}}{{if .Fault}}<rect class="mark-fault" x="{{.X}}" y="{{.Y}}" width="4" height="{{$.Timeline.LaneH}}" fill="#c62828"><title>{{.Title}}</title></rect>
{{else}}<rect class="mark-request" x="{{.X}}" y="{{.Y}}" width="1.5" height="{{$.Timeline.LaneH}}" fill="#0b57d0" fill-opacity="0.6"><title>{{.Title}}</title></rect>
{{end}}{{end}}</svg>
{{with .FaultList}}<table id="fault-list"><thead><tr><th>at</th><th>fault</th></tr></thead><tbody>{{range .}}<tr><td class="num">+{{.At}}</td><td>{{.Label}}</td></tr>{{end}}</tbody></table>{{end}}
</section>{{end}}
{{template "clients" .Clients}}
{{template "kinds" .Kinds}}
</body></html>
{{define "findings"}}{{with .List}}<section id="{{$.ID}}"><h2>{{$.Title}}</h2>{{range .}}
<div class="finding v-{{$.Verdict}}" data-property="{{.Property.Name}}" data-verdict="{{$.Verdict}}">
<h3>{{.N}}. {{.Property.Name}}: {{.Spec.Text}}</h3>
{{with found .Spec.Anomalies}}<p class="kinds">Found:{{range .}} <span class="found">{{template "kind" .}}&nbsp;×{{.N}}</span>{{end}}</p>{{end}}
{{with .Spec.Failure}}<pre class="failure">{{.}}</pre>{{end}}
{{with .Spec.Evidence}}{{with .Repro}}<p>Reproduce:</p><pre class="repro">{{.}}</pre>{{end}}
{{with .Message}}<p class="message">{{.}}</p>{{end}}
{{with .Counts}}<table class="counts"><thead><tr><th>counted</th><th>n</th></tr></thead><tbody>{{range $k, $v := .}}<tr><td>{{$k}}</td><td class="num">{{$v}}</td></tr>{{end}}</tbody></table>{{end}}
{{with .DiffPaths}}<p>Differing JSON paths:</p><ul class="diff-paths">{{range .}}<li><code>{{.}}</code></li>{{end}}</ul>{{end}}
{{range attempts .}}<details{{if eq .N 1}} open{{end}}><summary>Attempt {{.N}} of {{.Of}}</summary><pre class="attempt">{{.Text}}</pre></details>
{{end}}{{with hidden .}}<p>{{.}} more attempts in report.json.</p>{{end}}{{end}}
</div>{{end}}</section>{{end}}{{end}}`

// kindsSource is the template of a kind's badge (a link to its explanation when the page has
// one) and of the section that explains every kind the page shows.
const kindsSource = `{{define "kind"}}<a class="kind{{if .Unsafe}} unsafe{{end}}" data-kind="{{.Name}}"{{if .Explained}} href="#kind-{{.Name}}"{{end}} title="{{title .}}">{{.Name}}</a>{{end}}
{{define "kinds"}}{{with .}}<section id="kinds"><h2>What the anomaly kinds mean</h2>
<p>What each kind found above means, what usually causes it in real implementations, and how to confirm it by hand (<code>retrysafe explain KIND</code> prints the same).</p>
{{range .}}<div class="kind-explanation{{if .Kind.Unsafe}} unsafe{{end}}" id="kind-{{.Kind}}" data-kind="{{.Kind}}">
<h3>{{.Kind}}{{if .Kind.Unsafe}} (unsafe){{end}}</h3><p>{{.Meaning}}</p>
<p>Common causes:</p><ul>{{range .Causes}}<li>{{.}}</li>{{end}}</ul>
<p>Confirm by hand: {{.Confirm}}</p></div>
{{end}}</section>{{end}}{{end}}`
