package targets

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Backoff is an exponential backoff.
type Backoff struct {
	Initial    time.Duration
	Multiplier float64
	Max        time.Duration
	// Jitter is full (a delay in [0, cap]), equal ([cap/2, cap]), none (cap) or a range
	// (JitterRange: [JitterMin*cap, JitterMax*cap]).
	Jitter Jitter
	// JitterMin and JitterMax are the fractions of the cap a JitterRange draws from
	// (jitter: {min: 0.75, max: 1.0}: 75-100 % of the cap); 0 ≤ JitterMin ≤ JitterMax ≤ 1.
	JitterMin, JitterMax float64
}

// Jitter is how a backoff randomises its delays.
type Jitter string

// The jitters.
const (
	JitterFull  Jitter = "full"
	JitterEqual Jitter = "equal"
	JitterNone  Jitter = "none"
	// JitterRange draws from Backoff.JitterMin to JitterMax of the cap.
	JitterRange Jitter = "range"
)

// Cap is the backoff's cap before retry n (n = 1 is the first retry).
func (b Backoff) Cap(n int) time.Duration {
	d := float64(b.Initial)
	for i := 1; i < n && d < float64(b.Max); i++ {
		d *= b.Multiplier
	}
	return min(time.Duration(d), b.Max)
}

// Fractions are the fractions of the cap a delay is drawn between: full 0 and 1, equal 0.5 and
// 1, none 1 and 1, a range its min and max.
func (b Backoff) Fractions() (lo, hi float64) {
	switch b.Jitter {
	case JitterFull:
		return 0, 1
	case JitterEqual:
		return 0.5, 1
	case JitterRange:
		return b.JitterMin, b.JitterMax
	}
	return 1, 1
}

// Envelope is the range a delay before retry n falls in.
func (b Backoff) Envelope(n int) (lo, hi time.Duration) {
	c := b.Cap(n)
	flo, fhi := b.Fractions()
	return time.Duration(float64(c) * flo), time.Duration(float64(c) * fhi)
}

// Jittered reports whether the backoff randomises its delays at all (a range of one fraction
// does not).
func (b Backoff) Jittered() bool {
	lo, hi := b.Fractions()
	return lo < hi
}

// JitterWords names the jitter for messages: full, equal, none, or "75-100 %".
func (b Backoff) JitterWords() string {
	if b.Jitter != JitterRange {
		return string(b.Jitter)
	}
	pct := func(f float64) string { return strconv.FormatFloat(math.Round(f*10000)/100, 'f', -1, 64) }
	return pct(b.JitterMin) + "-" + pct(b.JitterMax) + " %"
}

// jitter decodes a backoff's jitter: full, equal, none, or {min, max}, fractions of the cap.
func (d *decoder) jitter(o *object, b *Backoff) {
	const hint = "must be full, equal, none or {min: 0.75, max: 1.0} (fractions of the cap)"
	switch n := o.fields["jitter"].val.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		jo, ok := d.object(n, o.at("jitter"), o.sub("jitter"))
		if !ok {
			return
		}
		lo, okLo := d.fraction(jo, "min")
		hi, okHi := d.fraction(jo, "max")
		if !jo.has("min") || !jo.has("max") {
			d.ps.add(jo.line, o.at("jitter"), "declare min and max, fractions of the cap (e.g. {min: 0.75, max: 1.0})")
			return
		}
		if okLo && okHi && lo > hi {
			d.ps.add(jo.lineOf("min"), o.at("jitter"), "min %v is above max %v", lo, hi)
			return
		}
		if okLo && okHi {
			b.Jitter, b.JitterMin, b.JitterMax = JitterRange, lo, hi
		}
		return
	}
	s, ok := d.str(o, "jitter")
	if !ok {
		return
	}
	switch j := Jitter(strings.TrimSpace(s)); j {
	case JitterFull, JitterEqual, JitterNone:
		b.Jitter = j
	default:
		d.ps.add(o.lineOf("jitter"), o.at("jitter"), "%s, got %q", hint, s)
	}
}

// fraction decodes the named field as a number in [0, 1].
func (d *decoder) fraction(o *object, name string) (float64, bool) {
	s, ok := d.str(o, name)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || f > 1 {
		d.ps.add(o.lineOf(name), o.at(name), "must be a fraction of the cap between 0 and 1, got %q", s)
		return 0, false
	}
	return f, true
}
