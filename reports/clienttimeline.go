package reports

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// ClientTimeline is one scenario of a client property as report.html draws it: each logical
// operation of the client a lane, each attempt a bar from its arrival to the harness's answer,
// and the delay before each retry written between two bars.
type ClientTimeline struct {
	// Title names the spec, e.g. "backoff reference: backs off within its envelope".
	Title string
	// Ops are the client's operations, in the order each first arrived.
	Ops []ClientLane
}

// ClientLane is one logical operation of a client timeline.
type ClientLane struct {
	// Label names the operation (its declared identity).
	Label    string
	Attempts []ClientMark
}

// ClientMark is one attempt of a client timeline.
type ClientMark struct {
	// Start is when the attempt arrived; Answered when the harness answered it (or closed
	// its connection).
	Start, Answered time.Time
	// Answer is what the harness answered: success, replay, drop, cut, hold, held or a status.
	Answer string
	// Key is the idempotency key it carried ("" = none).
	Key string
	// Restarted marks the first attempt of a restarted client.
	Restarted bool
}

// Geometry of a client timeline's SVG, in pixels.
const (
	ctWidth, ctLeft, ctRight  = 960, 210, 24
	ctLaneH, ctSpace, ctAxisH = 18, 6, 26
)

// clientTimeline is a ClientTimeline laid out for the template.
type clientTimeline struct {
	Title         string
	Width, Height int
	Left, Right   int
	AxisY         int
	Span          string
	Lanes         []ctLane
	Ticks         []tlTick
}

type ctLane struct {
	Y, TextY float64
	Label    string
	Bars     []ctBar
	Gaps     []ctGap
}

type ctBar struct {
	X, W        float64
	Fill, Title string
}

type ctGap struct {
	X, TextX float64
	W        float64
	Label    string
}

// answerFill colours an attempt by its answer.
func answerFill(answer string) string {
	switch answer {
	case "success", "replay":
		return "#1a7f37"
	case "drop", "cut", "hold", "held":
		return "#9a6700"
	}
	if n, err := strconv.Atoi(answer); err == nil && n >= 500 {
		return "#c62828"
	}
	return "#8250df" // a 4xx
}

// newClientTimelines lays out each scenario on its own time axis.
func newClientTimelines(tls []ClientTimeline) []clientTimeline {
	var out []clientTimeline
	for _, tl := range tls {
		var t0, t1 time.Time
		for _, op := range tl.Ops {
			for _, a := range op.Attempts {
				if t0.IsZero() || a.Start.Before(t0) {
					t0 = a.Start
				}
				if end := a.Answered; end.After(t1) {
					t1 = end
				}
			}
		}
		if t0.IsZero() {
			continue
		}
		span := max(t1.Sub(t0), time.Millisecond)
		plotW := float64(ctWidth - ctLeft - ctRight)
		x := func(t time.Time) float64 {
			return math.Round(10*(ctLeft+plotW*float64(t.Sub(t0))/float64(span))) / 10
		}
		c := clientTimeline{Title: tl.Title, Width: ctWidth, Left: ctLeft, Right: ctWidth - ctRight, Span: fmtOffset(span)}
		for i, op := range tl.Ops {
			y := float64(i * (ctLaneH + ctSpace))
			lane := ctLane{Y: y, TextY: y + ctLaneH - 5, Label: clip(op.Label, 32)}
			for n, a := range op.Attempts {
				end := a.Answered
				if end.Before(a.Start) {
					end = a.Start
				}
				key := a.Key
				if key == "" {
					key = "(none)"
				}
				title := fmt.Sprintf("attempt %d at +%s: %s, key %s", n+1, fmtOffset(a.Start.Sub(t0)), a.Answer, key)
				if a.Restarted {
					title += " (after the client's restart)"
				}
				lane.Bars = append(lane.Bars, ctBar{X: x(a.Start), W: max(3, x(end)-x(a.Start)), Fill: answerFill(a.Answer), Title: title})
				if n > 0 {
					prev := op.Attempts[n-1].Answered
					gx, gw := x(prev), x(a.Start)-x(prev)
					lane.Gaps = append(lane.Gaps, ctGap{X: gx, W: max(0, gw), TextX: gx + gw/2, Label: fmtOffset(a.Start.Sub(prev))})
				}
			}
			c.Lanes = append(c.Lanes, lane)
		}
		c.AxisY = len(tl.Ops)*(ctLaneH+ctSpace) + 2
		c.Height = c.AxisY + ctAxisH
		for i := 0; i <= tlTicks; i++ {
			d := span * time.Duration(i) / tlTicks
			c.Ticks = append(c.Ticks, tlTick{math.Round(10*(ctLeft+plotW*float64(d)/float64(span))) / 10, fmtOffset(d)})
		}
		out = append(out, c)
	}
	return out
}

// clientTimelineSource draws the client timelines (a template of htmlSource).
const clientTimelineSource = `{{define "clients"}}{{with .}}<section id="client-timelines"><h2>Client attempts</h2>
<p>Each lane is one logical operation of the client; each bar an attempt, from its arrival to the harness's answer
(green: success or its replay; red: a 5xx; amber: a dropped, held or timed-out answer; purple: a 4xx); the delay before each retry is written between two bars.</p>
{{range .}}{{$tl := .}}<h3>{{.Title}}</h3>
<svg class="client-timeline" role="img" aria-label="attempts of {{.Title}}" width="100%" viewBox="0 0 {{.Width}} {{.Height}}">
{{range .Lanes}}{{$lane := .}}<text x="4" y="{{.TextY}}">{{.Label}}</text>
{{range .Gaps}}<line x1="{{.X}}" y1="{{addf $lane.Y 9}}" x2="{{addf .X .W}}" y2="{{addf $lane.Y 9}}" stroke="#8c959f" stroke-dasharray="3 2"/><text x="{{.TextX}}" y="{{addf $lane.Y 7}}" text-anchor="middle" font-size="10">{{.Label}}</text>
{{end}}{{range .Bars}}<rect class="attempt" x="{{.X}}" y="{{$lane.Y}}" width="{{.W}}" height="18" fill="{{.Fill}}"><title>{{.Title}}</title></rect>
{{end}}{{end}}<line x1="{{.Left}}" y1="{{.AxisY}}" x2="{{.Right}}" y2="{{.AxisY}}" stroke="#444"/>
{{range .Ticks}}<text x="{{.X}}" y="{{add $tl.AxisY 16}}" text-anchor="middle">+{{.Label}}</text>
{{end}}</svg>
{{end}}</section>{{end}}{{end}}`
