package suites

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"slices"
	"sync"
	"time"
)

// raceStats collects the arrival spreads of every burst of a run.
type raceStats struct {
	mu      sync.Mutex
	spreads []time.Duration
}

// noteSpread records the arrival spread of one burst.
func (e *Env) noteSpread(d time.Duration) {
	e.race.mu.Lock()
	defer e.race.mu.Unlock()
	e.race.spreads = append(e.race.spreads, d)
}

// raceFigures are the race property's figures: the mode and the arrival spread (median and
// 90th percentile over every burst of the run so far).
func (e *Env) raceFigures() map[string]string {
	e.race.mu.Lock()
	spreads := slices.Clone(e.race.spreads)
	e.race.mu.Unlock()
	f := map[string]string{"mode": e.raceMode()}
	if len(spreads) == 0 {
		f["arrival_spread"] = "not reported by the target (no " + arrivalHeader + " in its answers)"
		return f
	}
	slices.Sort(spreads)
	f["arrival_spread_p50"] = fmtDuration(check.Percentile(spreads, 50))
	f["arrival_spread_p90"] = fmtDuration(check.Percentile(spreads, 90))
	f["arrival_spread_bursts"] = itoa(len(spreads))
	return f
}

// fmtDuration renders a duration in milliseconds with three decimals, e.g. "0.412ms".
func fmtDuration(d time.Duration) string {
	return sprintf("%.3fms", float64(d)/float64(time.Millisecond))
}
