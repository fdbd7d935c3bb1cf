package suites

import (
	"maps"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// figuresEntry names the report entry by which a spec publishes its property's key figures
// (reports.Property.Figures); a later spec's figure replaces an earlier one of the same name.
const figuresEntry = "retrysafe-figures"

// publishFigures adds key figures to the running spec's property.
func publishFigures(figures map[string]string) {
	if len(figures) > 0 {
		AddReportEntry(figuresEntry, maps.Clone(figures), ReportEntryVisibilityNever)
	}
}

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
	f["arrival_spread_p50"] = fmtDuration(percentile(spreads, 50))
	f["arrival_spread_p90"] = fmtDuration(percentile(spreads, 90))
	f["arrival_spread_bursts"] = itoa(len(spreads))
	return f
}

// percentile returns the p-th percentile (nearest rank) of sorted durations; 0 when empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// fmtDuration renders a duration in milliseconds with three decimals, e.g. "0.412ms".
func fmtDuration(d time.Duration) string {
	return sprintf("%.3fms", float64(d)/float64(time.Millisecond))
}
