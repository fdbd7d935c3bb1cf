package check

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

func TestInFlightTogether(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(start, end int) history.Attempt {
		a := history.Attempt{Start: t0.Add(time.Duration(start) * time.Millisecond)}
		if end >= 0 {
			a.End = t0.Add(time.Duration(end) * time.Millisecond)
		}
		return a
	}
	for name, c := range map[string]struct {
		atts []history.Attempt
		want int
	}{
		"none":                      {nil, 0},
		"one":                       {[]history.Attempt{at(0, 5)}, 1},
		"one after the other":       {[]history.Attempt{at(0, 5), at(5, 9), at(9, 12)}, 1},
		"all at once":               {[]history.Attempt{at(0, 9), at(1, 3), at(1, 2), at(1, 8)}, 4},
		"two pairs":                 {[]history.Attempt{at(0, 4), at(1, 3), at(10, 14), at(11, 15)}, 2},
		"no answer stays in flight": {[]history.Attempt{at(0, -1), at(20, 30)}, 2},
		"never sent":                {[]history.Attempt{{}, at(0, 3)}, 1},
	} {
		if got := InFlightTogether(c.atts); got != c.want {
			t.Errorf("%s: InFlightTogether = %d, want %d", name, got, c.want)
		}
	}
}

func TestOverlapsJudge(t *testing.T) {
	raced := Overlaps{K: 8, Each: []int{8, 1, 5}}
	var r Result
	raced.Judge(&r, "deliveries of one event")
	if r.Verdict() != "pass" || !strings.Contains(strings.Join(r.Observed, ""), "up to 8 of 8 deliveries of one event in flight together (the least in a burst: 1, over 3 bursts)") {
		t.Errorf("a burst that raced: verdict %s, observed %q", r.Verdict(), r.Observed)
	}
	calm := Overlaps{K: 8, Each: []int{1, 1}}
	r = Result{}
	calm.Judge(&r, "requests")
	if r.Verdict() != "unknown" || !strings.Contains(r.Message(), "no two requests of a burst were in flight at once") {
		t.Errorf("bursts that never raced: verdict %s, %q; want unknown", r.Verdict(), r.Message())
	}
	// A violation found anyway stands.
	r = Result{}
	r.Anomalies = append(r.Anomalies, anomaly("duplicate-record", history.Attempt{}, "two records"))
	calm.Judge(&r, "requests")
	if r.Verdict() != "fail" {
		t.Errorf("a violation in bursts that did not race: verdict %s, want fail", r.Verdict())
	}
}
