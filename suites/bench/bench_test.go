package bench

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestBareMixMatchesTheLoadMix(t *testing.T) {
	m := &bareMix{rng: rand.New(rand.NewPCG(1, 2)), prefix: "k"}
	const hits = 100_000
	seen := map[string]int{}
	for range hits {
		seen[m.next()]++
	}
	repeats := hits - len(seen)
	// 15% pairs add a second hit each, 15% retries repeat a key: about 26% of all hits.
	if got := float64(repeats) / hits; got < 0.24 || got > 0.28 {
		t.Errorf("%.3f of the hits repeat a key, want about 0.26", got)
	}
}

func TestBurstPacer(t *testing.T) {
	p := burstPacer(16)
	for hits := uint64(0); hits < 16; hits++ {
		if wait, stop := p.Pace(time.Second, hits); wait != 0 || stop {
			t.Fatalf("Pace after %d hits = %v, %v; want 0, false", hits, wait, stop)
		}
	}
	if _, stop := p.Pace(0, 16); !stop {
		t.Error("the pacer did not stop after 16 hits")
	}
}

func TestMedianAndRatios(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 2, 3}); got != 2.5 {
		t.Errorf("median = %v, want 2.5", got)
	}
	a := []sample{{n: 100, wall: time.Second, cpu: time.Second, cpuKnown: true}}
	b := []sample{{n: 200, wall: time.Second, cpu: time.Second, cpuKnown: true}}
	if got := ratios(a, b, rateOf); got[0] != 0.5 {
		t.Errorf("rate ratio = %v, want 0.5", got[0])
	}
	if got := cpuOf(a[0]); got != 0.01 {
		t.Errorf("CPU per request = %v s, want 0.01", got)
	}
	if got := cpuOf(sample{n: 1}); got != 0 {
		t.Errorf("unknown CPU = %v, want 0", got)
	}
}

// TestRunSmall runs the five benchmarks at a tiny size: each must finish and print its
// table and its verdict (whether a goal is met depends on the machine, so it is not asserted).
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the reference API on SQLite and PostgreSQL")
	}
	var out strings.Builder
	err := Run(t.Context(), Options{SpreadRounds: 2, RaceRounds: 2, LoadDuration: 300 * time.Millisecond,
		LoadRepeats: 1, HistoryN: 20_000, MergeAttempts: 20_000, Out: &out})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"1. Arrival spread", "lastbyte", "barrier", "vegeta", "2. Race detection", "sqlite",
		"postgres", "3. Load overhead", "4. History cost", "check.Load over 20000 attempts", "5. Sharded load", "shard 0 of 4",
		"read the set once", "retrysafe merge: not measured"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "unavailable") {
		t.Errorf("a store was unavailable:\n%s", out.String())
	}
	// "met" or "NOT met": twice for race detection (one per store), twice for the load
	// overhead (one per work delay), twice for the history.
	if n := len(regexp.MustCompile(`\bmet\b`).FindAllString(out.String(), -1)); n != 6 {
		t.Errorf("%d verdicts, want 6:\n%s", n, out.String())
	}
}
