package api

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// What the properties that kill the API under concurrent load share (crash-under-load,
// event-after-crash): workers that send operations and retry unacknowledged ones, a nemesis that
// SIGKILLs and restarts instances on a seeded schedule, each time with operations in flight, and
// the completion of every operation afterwards.

// crashPlan is the shape of one run under seeded kills.
type crashPlan struct {
	// defs are the operations the workers send, in turn.
	defs []*targets.Operation
	// kills is how many SIGKILLs the nemesis injects, workers how many workers send, maxOps
	// how many operations they start at most.
	kills, workers, maxOps int
	// pause is how long a worker waits between two of its operations; minAge how long an
	// attempt must have been in flight for the nemesis to count it (it kills once one is).
	pause, minAge time.Duration
	// storage resets the storage link once midway, where a storage address is declared.
	storage bool
	// aim kills in the target's steady state, late in an attempt: before each kill the nemesis
	// waits until the (re)started target has acknowledged an operation per worker (a restarted
	// process on a loaded machine first spends a while connecting to its store: a kill then
	// lands before any write, where it proves nothing), and it counts an attempt in flight once
	// it is older than half the recent attempts' median latency (minAge until one is known),
	// so that the kill lands among the writes whether the store answers in 5 ms or in 500.
	aim bool
}

// Aiming bounds (crashPlan.aim).
const (
	// steadyWait bounds the wait for the acknowledgements after a restart.
	steadyWait = 5 * time.Second
	// latencyWindow is how many recent acknowledged attempts the median latency is taken over.
	latencyWindow = 16
)

// newCrashRun prepares a run of plan, its schedule drawn from the run's seed.
func (s *S) newCrashRun(plan crashPlan) *crashRun {
	return &crashRun{s: s, plan: plan, rng: rand.New(rand.NewPCG(uint64(s.Settings.Seed), 0xc4a5)),
		inflight: map[string]int{}, since: map[string]time.Time{}}
}

// loadOp is one operation of a run under seeded kills.
type loadOp struct {
	op    *framework.Op
	acked bool // got a 2xx
}

// crashRun is the state of one run under seeded kills.
type crashRun struct {
	s        *S
	plan     crashPlan
	rng      *rand.Rand
	mu       sync.Mutex
	ops      []*loadOp
	inflight map[string]int       // key -> attempts in flight
	since    map[string]time.Time // key -> when its oldest attempt in flight started
	stop     atomic.Bool
	kills    int       // SIGKILLs the nemesis injected
	restart  time.Time // when the restart after the last kill was ready
	acks     atomic.Int64
	// interval is when the current interval between kills began (zero: before the run), and
	// intervals how many have ended (freshAllowed).
	interval  time.Time
	intervals int
	recent    []time.Duration // latencies of the last acknowledged attempts (latencyWindow at most)
}

// run runs the workers while the nemesis kills and restarts, and returns the nemesis's error.
func (cr *crashRun) run() error {
	var wg sync.WaitGroup
	cr.mu.Lock()
	cr.interval = time.Now()
	cr.mu.Unlock()
	for w := range cr.plan.workers {
		wg.Go(func() { cr.worker(w) })
	}
	err := cr.nemesis()
	cr.stop.Store(true)
	wg.Wait()
	return err
}

// worker runs operations until stopped: mostly fresh ones, sometimes a retry of an earlier
// operation that has not been acknowledged yet. An attempt that got no answer (the target is
// down, being restarted) is retried with the same key after a short wait, as a client would:
// a fresh operation per refused connection would spend the run's budget while the target
// restarts on a loaded machine, and leave no operation in flight for the later kills. Once the
// budget is spent, the worker retries the unacknowledged operations until stopped.
func (cr *crashRun) worker(w int) {
	defs := cr.plan.defs
	var again *loadOp // the operation whose last attempt got no answer
	for i := 0; !cr.stop.Load() && cr.s.Ctx().Err() == nil; i++ {
		lo := again
		if lo == nil {
			lo = cr.pick(defs, w, i)
		}
		again = nil
		if lo == nil { // nothing to send now
			time.Sleep(idlePause)
			continue
		}
		cr.begin(lo.op.Key)
		ctx, cancel := context.WithTimeout(cr.s.Ctx(), 2*time.Second)
		a := lo.op.DoCtx(ctx, framework.Send{Instance: -1})
		cancel()
		cr.end(lo.op.Key)
		switch {
		case framework.Succeeded(a):
			cr.mu.Lock()
			lo.acked = true
			if cr.recent = append(cr.recent, a.End.Sub(a.Start)); len(cr.recent) > latencyWindow {
				cr.recent = cr.recent[1:]
			}
			cr.mu.Unlock()
			cr.acks.Add(1)
		case a.Status == 0:
			again = lo
			time.Sleep(unansweredPause)
		}
		time.Sleep(cr.plan.pause)
	}
}

// unansweredPause is how long a worker waits before it retries an attempt that got no answer;
// idlePause how long it waits when it has nothing to send (the budget's share of the moment is
// spent and every unacknowledged operation is in flight).
const (
	unansweredPause = 20 * time.Millisecond
	idlePause       = 5 * time.Millisecond
)

// The budget of fresh operations is spread over the nemesis's schedule, so that a fast target
// does not spend it before the last kills (and leave only retries in flight for them): each of
// the kills+1 intervals between restarts gets an equal share, released over budgetSpread from
// the interval's start.
const budgetSpread = 400 * time.Millisecond

// freshAllowed is how many fresh operations may have been started by now (under cr.mu).
func (cr *crashRun) freshAllowed() int {
	share := float64(cr.plan.maxOps) / float64(cr.plan.kills+1)
	part := 1.0
	if !cr.interval.IsZero() {
		part = min(1, float64(time.Since(cr.interval))/float64(budgetSpread))
	}
	return min(cr.plan.maxOps, int(share*(float64(cr.intervals)+part)+0.5))
}

// pick returns the next operation: a retry of an unacknowledged one (about a third of the
// time when there is one), else a fresh one while the op budget lasts.
func (cr *crashRun) pick(defs []*targets.Operation, w, i int) *loadOp {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if i%3 == 2 {
		for _, lo := range cr.ops {
			if !lo.acked && cr.inflight[lo.op.Key] == 0 {
				return lo
			}
		}
	}
	if len(cr.ops) >= cr.freshAllowed() {
		for _, lo := range cr.ops { // the budget (of the moment) is spent: retry what is not acknowledged
			if !lo.acked && cr.inflight[lo.op.Key] == 0 {
				return lo
			}
		}
		return nil
	}
	lo := &loadOp{op: cr.s.NewOp(defs[(w+i)%len(defs)])}
	if ts := cr.s.Target.Tenants; len(ts) > 1 {
		lo.op.Tenant = ts[(w+i)%len(ts)]
	}
	cr.ops = append(cr.ops, lo)
	return lo
}

func (cr *crashRun) begin(key string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.inflight[key]++; cr.inflight[key] == 1 {
		cr.since[key] = time.Now()
	}
}

func (cr *crashRun) end(key string) { cr.mu.Lock(); cr.inflight[key]--; cr.mu.Unlock() }

// inFlight returns the keys with an attempt in flight for at least minAge: past its claim,
// most likely inside the target's writes, where a kill hurts.
func (cr *crashRun) inFlight(minAge time.Duration) []string {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	var keys []string
	for k, n := range cr.inflight {
		if n > 0 && time.Since(cr.since[k]) >= minAge {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// nemesis kills and restarts instances through the nemesis on the seeded schedule, each time
// with operations in flight, and resets the storage link once midway when one is declared. Its
// events go into the history, where the checker finds which kills hit which operations.
func (cr *crashRun) nemesis() error {
	s := cr.s
	c := s.Faults.Cluster
	for k := 1; k <= cr.plan.kills; k++ {
		if cr.plan.aim {
			cr.awaitSteady()
		}
		if !s.SleepUntil(time.Now().Add(time.Duration(150+cr.rng.IntN(250)) * time.Millisecond)) {
			return nil
		}
		minAge := cr.plan.minAge
		if m := cr.medianLatency(); cr.plan.aim && m > 0 {
			minAge = m / 2
		}
		var keys []string
		for wait := 0; wait < 500 && len(keys) == 0; wait++ {
			if keys = cr.inFlight(minAge); len(keys) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		if s.Ctx().Err() != nil {
			return nil // no kill once the run is over: nothing would restart the process
		}
		kill := c.KillFault(cr.rng.IntN(c.Size()))
		if err := s.Inject(kill); err != nil {
			return err
		}
		cr.kills++
		s.Notef("kill %d at %s with %d operations in flight: %s", k, time.Now().Format("15:04:05.000"), len(keys),
			strings.Join(firstN(keys, 8), ", "))
		if cr.plan.storage && k == cr.plan.kills/2+1 {
			if err := cr.storageReset(); err != nil {
				return err
			}
		}
		if err := s.Heal(kill); err != nil {
			return err
		}
		cr.restart = time.Now()
		cr.mu.Lock()
		cr.interval, cr.intervals = cr.restart, cr.intervals+1
		cr.mu.Unlock()
	}
	s.SleepUntil(time.Now().Add(300 * time.Millisecond))
	return nil
}

// awaitSteady waits until the target has acknowledged an operation per worker since the last
// restart (since now, before the first kill), at most steadyWait.
func (cr *crashRun) awaitSteady() {
	from, deadline := cr.acks.Load(), time.Now().Add(steadyWait)
	for cr.acks.Load()-from < int64(cr.plan.workers) && time.Now().Before(deadline) && cr.s.Ctx().Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if n := cr.acks.Load() - from; n < int64(cr.plan.workers) {
		cr.s.Notef("the target acknowledged %d operations in the %v after the restart (waited for %d before the next kill)", n, steadyWait, cr.plan.workers)
	}
}

// medianLatency is the median latency of the recent acknowledged attempts (0: none yet).
func (cr *crashRun) medianLatency() time.Duration {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if len(cr.recent) == 0 {
		return 0
	}
	l := slices.Clone(cr.recent)
	slices.Sort(l)
	return l[len(l)/2]
}

// storageReset cuts the storage link's connections once (when one is declared).
func (cr *crashRun) storageReset() error {
	st := cr.s.Faults.Storage
	if st == nil {
		return nil
	}
	f := st.Reset()
	if err := cr.s.Inject(f); err != nil {
		return err
	}
	time.Sleep(100 * time.Millisecond)
	return cr.s.Heal(f)
}

// complete retries an unacknowledged operation until it answers 2xx or the deadline passes (an
// acknowledged one is done: it is not asked again, since a key past its retention would be
// processed as new).
func (cr *crashRun) complete(lo *loadOp, deadline time.Time) {
	cr.mu.Lock()
	acked := lo.acked
	cr.mu.Unlock()
	for !acked && cr.s.Ctx().Err() == nil {
		a := lo.op.Do(framework.Send{Instance: -1})
		if framework.Succeeded(a) || time.Now().After(deadline) {
			return
		}
		cr.s.SleepUntil(time.Now().Add(100 * time.Millisecond))
	}
}

// firstN returns the first n strings, and how many more there are.
func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
	}
	return s
}
