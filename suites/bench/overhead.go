package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/reference"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// overheadBench is benchmark 3: the rate the load property sustains (through the harness's
// client, every attempt recorded, then counted and checked) against a bare Vegeta attack
// sending the same mix of requests, both at unlimited rate with the same number of workers
// on the same target, alternating; once with the reference API's default work delay and
// once without (every request then costs the target CPU only: the harness competes with it
// for the cores, the worst case for its overhead). The ratio is the median of the pairs'.
func overheadBench(ctx context.Context, o *Options) error {
	w := o.Out
	fmt.Fprintf(w, "3. Load overhead: unlimited rate, %s per attack, %d alternating pairs per row (reference API\n"+
		"   in-process, memory store). Both send fresh operations, concurrent pairs and retries in the load\n"+
		"   property's mix; the load property with %d concurrent hits (plus the twins of its pairs), the bare\n"+
		"   Vegeta attack with %d workers, no history and no checks. Rates are medians; the CPU columns are\n"+
		"   the process's CPU time per request (target included), whose ratio is what a CPU-bound run sustains.\n",
		o.LoadDuration, o.LoadRepeats, o.LoadWorkers, bareWorkers(o.LoadWorkers))
	fmt.Fprintf(w, "   %-10s %10s %10s %7s %12s %12s %9s   %s\n",
		"work delay", "bare /s", "load /s", "ratio", "bare CPU/req", "load CPU/req", "CPU ratio", "goal >= 85%")
	var last *framework.LoadRun
	for _, delay := range []time.Duration{reference.DefaultWorkDelay, 0} {
		bare, load, run, err := overheadRow(ctx, o, delay)
		if err != nil {
			return err
		}
		last = run
		rate, cpu := median(ratios(load, bare, rateOf)), median(ratios(bare, load, cpuOf))
		cpuRatio := "n/a"
		if cpu > 0 {
			cpuRatio = fmt.Sprintf("%.1f%%", 100*cpu)
		}
		fmt.Fprintf(w, "   %-10s %10.0f %10.0f %6.1f%% %12s %12s %9s   %s\n", delay,
			median(apply(bare, rateOf)), median(apply(load, rateOf)), 100*rate,
			us(median(apply(bare, cpuOf))), us(median(apply(load, cpuOf))), cpuRatio, verdict(rate >= 0.85))
	}
	fmt.Fprintf(w, "   after the last load attack: counting the records of %d operations took %s, checking %d attempts %s\n\n",
		last.Result.Ops, last.Counting.Round(time.Millisecond), last.Result.Attempts, last.Checking.Round(time.Microsecond))
	return nil
}

// sample is one attack: requests answered, wall time, CPU time.
type sample struct {
	n        int
	wall     time.Duration
	cpu      time.Duration
	cpuKnown bool
}

func rateOf(s sample) float64 { return float64(s.n) / s.wall.Seconds() }

// cpuOf is the CPU time per request in seconds (0 when unknown).
func cpuOf(s sample) float64 {
	if !s.cpuKnown || s.n == 0 {
		return 0
	}
	return s.cpu.Seconds() / float64(s.n)
}

func apply(ss []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// ratios returns f(a[i]) / f(b[i]) for each pair (0 where f(b[i]) is 0).
func ratios(a, b []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		if fb := f(b[i]); fb > 0 {
			out[i] = f(a[i]) / fb
		}
	}
	return out
}

func us(seconds float64) string {
	if seconds == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fµs", seconds*1e6)
}

// measure runs f and returns its wall and CPU time.
func measure(f func() int) sample {
	cpu0, ok0 := processCPU()
	started := time.Now()
	n := f()
	s := sample{n: n, wall: time.Since(started)}
	cpu1, ok1 := processCPU()
	s.cpu, s.cpuKnown = cpu1-cpu0, ok0 && ok1
	return s
}

// overheadRow measures the bare and the load attacks, alternating, on one server.
func overheadRow(ctx context.Context, o *Options, delay time.Duration) (bare, load []sample, last *framework.LoadRun, err error) {
	s, err := startServer(ctx, "memory", reference.MutantNone, delay, o.PostgresDSN)
	if err != nil {
		return nil, nil, nil, err
	}
	defer s.close()
	for i := range o.LoadRepeats {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		runtime.GC()
		bare = append(bare, measure(func() int { return bareAttack(s, bareWorkers(o.LoadWorkers), o.LoadDuration, int64(i)) }))
		env, closeEnv := s.session(framework.Settings{LoadWorkers: o.LoadWorkers})
		runtime.GC()
		var run *framework.LoadRun
		smp := measure(func() int {
			run = env.LoadAttack(0, o.LoadDuration)
			return run.Attempts()
		})
		env.FinishLoad(run)
		closeEnv()
		if run.Err != nil {
			return nil, nil, nil, run.Err
		}
		if n := len(run.Result.Anomalies); n > 0 {
			return nil, nil, nil, fmt.Errorf("the load run found %d anomalies in the correct API", n)
		}
		load = append(load, smp)
		last = run
	}
	return bare, load, last, nil
}

// bareWorkers is the bare attack's concurrency: the load property's hits plus the twins its
// concurrent pairs fire beside them (half its retry fraction).
func bareWorkers(loadWorkers int) int {
	return int(float64(loadWorkers)*(1+framework.DefaultLoadRetryFraction/2) + 0.5)
}

// bareAttack runs Vegeta with its own client at unlimited rate against the orders endpoint,
// in the load property's mix of requests, and returns the number of requests it sent.
func bareAttack(s *server, workers int, d time.Duration, seed int64) int {
	u := s.url + "/v1/orders"
	mix := &bareMix{rng: rand.New(rand.NewPCG(uint64(seed), 7)), prefix: fmt.Sprintf("bare-%d-%d", time.Now().UnixNano(), seed)}
	targeter := func(t *vegeta.Target) error {
		key := mix.next()
		t.Method, t.URL = http.MethodPost, u
		t.Body = fmt.Appendf(nil, `{"ref": %q, "amount": 1000, "currency": "eur"}`, key)
		t.Header = http.Header{
			"Authorization":   {"Bearer alice"},
			"Content-Type":    {"application/json"},
			"Idempotency-Key": {`"` + key + `"`},
		}
		return nil
	}
	nw := uint64(workers)
	noProxy := func(*http.Request) (*url.URL, error) { return nil, nil }
	atk := vegeta.NewAttacker(vegeta.Workers(nw), vegeta.MaxWorkers(nw), vegeta.Connections(workers), vegeta.Proxy(noProxy))
	n := 0
	for range atk.Attack(targeter, vegeta.Rate{}, d, "bare") {
		n++
	}
	return n
}

// bareMix picks keys in the load property's mix: 70% fresh, 15% fresh and sent twice in a
// row (a pair), 15% a retry of one of the latest framework.LoadRetryWindow keys.
type bareMix struct {
	mu      sync.Mutex
	rng     *rand.Rand
	prefix  string
	keys    []string
	pending string
}

func (m *bareMix) next() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.pending; k != "" {
		m.pending = ""
		return k
	}
	r := m.rng.Float64()
	if r < framework.DefaultLoadRetryFraction/2 && len(m.keys) > 0 {
		return m.keys[len(m.keys)-1-m.rng.IntN(min(len(m.keys), framework.LoadRetryWindow))]
	}
	k := fmt.Sprintf("%s-%d", m.prefix, len(m.keys))
	m.keys = append(m.keys, k)
	if r < framework.DefaultLoadRetryFraction {
		m.pending = k
	}
	return k
}

// median returns the median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
