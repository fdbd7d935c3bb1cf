package check

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// A property whose kill of a defect rests on chance (requests or deliveries meant to race) can
// pass only when the race was run: its specs count how many of the K sends were in flight at
// once, say it on a pass (Result.Observed), and call a spec where no two were unknown, never
// pass. Overlaps are counted from the harness's side: the sends of one burst that had all
// started before any of them was answered were at the target together.

// InFlightTogether is the most attempts that were in flight at one moment: sent (Start) and not
// yet answered (End; an attempt without an answer counts as in flight to the end). Attempts
// never sent (no Start) do not count.
func InFlightTogether(atts []history.Attempt) int {
	type edge struct {
		at   time.Time
		step int
	}
	var last time.Time
	for _, a := range atts {
		if a.End.After(last) {
			last = a.End
		}
	}
	var edges []edge
	for _, a := range atts {
		if a.Start.IsZero() {
			continue
		}
		end := a.End
		if end.IsZero() || end.Before(a.Start) {
			end = last.Add(time.Nanosecond)
		}
		edges = append(edges, edge{a.Start, 1}, edge{end, -1})
	}
	// An answer at the instant another send starts ends before it: they did not overlap.
	slices.SortFunc(edges, func(x, y edge) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.step - y.step
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.step
		most = max(most, n)
	}
	return most
}

// Overlaps collects how many sends were in flight at once in each burst of a spec.
type Overlaps struct {
	// K is the size of a burst.
	K int
	// Each is the overlap of each burst, in order.
	Each []int
	// Unseen, when set, says why the overlap could not be seen: the spec is then unknown
	// (unless it found a violation anyway).
	Unseen string
}

// Add records one burst's attempts.
func (o *Overlaps) Add(burst []history.Attempt) int {
	n := InFlightTogether(burst)
	o.Each = append(o.Each, n)
	return n
}

// AddCount records one burst's overlap counted otherwise (deliveries held together at the sink).
func (o *Overlaps) AddCount(n int) { o.Each = append(o.Each, n) }

// Raced reports whether some burst had two sends in flight at once.
func (o *Overlaps) Raced() bool {
	return slices.ContainsFunc(o.Each, func(n int) bool { return n >= 2 })
}

// Describe says how many of the K sends (named what) were in flight together: "16 of 16
// same-key requests in flight together (the least in a burst: 9, over 20 bursts)".
func (o *Overlaps) Describe(what string) string {
	if len(o.Each) == 0 {
		return "no burst of " + what + " was sent"
	}
	lo, hi := slices.Min(o.Each), slices.Max(o.Each)
	if len(o.Each) == 1 {
		return fmt.Sprintf("%d of %d %s in flight together", hi, o.K, what)
	}
	return fmt.Sprintf("up to %d of %d %s in flight together (the least in a burst: %d, over %d bursts)", hi, o.K, what, lo, len(o.Each))
}

// Judge adds the overlaps to a result: observed on a pass, and unknown when no burst raced (the
// spec then proved nothing about concurrent sends). what names the sends: "requests",
// "deliveries of one event".
func (o *Overlaps) Judge(r *Result, what string) {
	if o.Unseen != "" {
		if len(r.Anomalies) == 0 {
			r.Unknown = append(r.Unknown, fmt.Sprintf("whether the %s raced is not known: %s", what, o.Unseen))
		}
		return
	}
	r.Observef("%s", o.Describe(what))
	if !o.Raced() && len(r.Anomalies) == 0 {
		r.Unknown = append(r.Unknown, fmt.Sprintf("no two %s of a burst were in flight at once (%s): they did not race, and the spec proves nothing about concurrent ones",
			what, o.Describe(what)))
	}
}
