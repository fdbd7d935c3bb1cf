package framework

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
)

// raceStats collects the arrival spreads of every burst of a run.
type raceStats struct {
	mu      sync.Mutex
	spreads []time.Duration
}

// NoteSpread records the arrival spread of one burst.
func (e *Env) NoteSpread(d time.Duration) {
	e.race.mu.Lock()
	defer e.race.mu.Unlock()
	e.race.spreads = append(e.race.spreads, d)
}

// RaceFigures are the race property's figures: the mode and the arrival spread (median and
// 90th percentile over every burst of the run so far).
func (e *Env) RaceFigures() map[string]string {
	e.race.mu.Lock()
	spreads := slices.Clone(e.race.spreads)
	e.race.mu.Unlock()
	f := map[string]string{"mode": e.raceMode()}
	if len(spreads) == 0 {
		f["arrival_spread"] = "not reported by the target (no " + arrivalHeader + " in its answers)"
		return f
	}
	slices.Sort(spreads)
	f["arrival_spread_p50"] = Millis(check.Percentile(spreads, 50))
	f["arrival_spread_p90"] = Millis(check.Percentile(spreads, 90))
	f["arrival_spread_bursts"] = strconv.Itoa(len(spreads))
	return f
}

// Millis renders a duration in milliseconds with three decimals, e.g. "0.412ms".
func Millis(d time.Duration) string {
	return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond))
}
