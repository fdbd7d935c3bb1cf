package api

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// crash-under-load (Jepsen-style): concurrent operations with retries run while the harness,
// from a seeded schedule, SIGKILLs and restarts the target at least five times, each time
// with operations in flight; latency on the storage link widens every window and a reset
// cuts a transaction where a storage address is declared. Afterwards every operation is
// retried to completion and the history is checked.
//
// The target MUST leave no operation with two records, exactly one record for every
// operation acknowledged with a 2xx, and no key stuck past the lock timeout.
//
// Catches: split-write (record and key completion in two transactions: a kill between them
// makes the retry execute again).
func init() {
	p := &Property{
		Name: "crash-under-load",
		Must: `Under concurrent load with retries and at least five SIGKILLs and restarts (each with
operations in flight), no operation MAY have two records, every operation acknowledged with a 2xx
MUST have exactly one, and no key MAY stay stuck past the lock timeout.`,
		Catches: []string{"split-write"},
		Needs:   []string{"lifecycle (durable: true)", "lock_timeout", "operations[].observer", "storage (optional: latency and resets)"},
		Labels:  []string{"fault:process", "fault:storage"},
		Applies: func(e *Env) string {
			if r := framework.NeedsCrash(e); r != "" {
				return r
			}
			if len(e.Observed()) == 0 {
				return "no operation has an observer: records cannot be counted"
			}
			return ""
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return []*Spec{spec(p, fmt.Sprintf("%d SIGKILLs under concurrent load leave exactly one record per operation", crashKills),
			func(s *S) check.Result { return s.crashUnderLoad() })}
	}
	register(p)
}

// Shape of the crash-under-load run.
const (
	crashKills   = 10
	crashWorkers = 4
	crashMaxOps  = 500
)

// loadOp is one operation of the crash-under-load history.
type loadOp struct {
	op    *framework.Op
	acked bool // got a 2xx
}

// crashRun is the state of one crash-under-load run.
type crashRun struct {
	s        *S
	rng      *rand.Rand
	mu       sync.Mutex
	ops      []*loadOp
	inflight map[string]int       // key -> attempts in flight
	since    map[string]time.Time // key -> when its oldest attempt in flight started
	stop     atomic.Bool
	kills    int // SIGKILLs the nemesis injected
}

// crashUnderLoad runs the load, the nemesis and the completion, and checks the history.
func (s *S) crashUnderLoad() check.Result {
	cr := &crashRun{s: s, rng: rand.New(rand.NewPCG(uint64(s.Settings.Seed), 0xc4a5)), inflight: map[string]int{}, since: map[string]time.Time{}}
	from := int64(s.History.Len())
	var latency faults.Fault
	if st := s.Faults.Storage; st != nil {
		latency = st.Latency(5 * time.Millisecond)
		if err := s.Inject(latency); err != nil {
			return check.Unknownf("%v", err)
		}
		defer s.Heal(latency)
	}
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() { cr.worker(w) })
	}
	nemesisErr := cr.nemesis()
	cr.stop.Store(true)
	wg.Wait()
	if latency != nil { // the completion and the counts run without it
		if err := s.Heal(latency); err != nil {
			return check.Unknownf("%v", err)
		}
	}
	s.Client.CloseIdle()
	if nemesisErr != nil {
		return check.Unknownf("the nemesis failed: %v", nemesisErr)
	}
	if s.Ctx().Err() != nil {
		return check.Unknownf("interrupted")
	}
	deadline := time.Now().Add(s.Target.LockTimeout + framework.CrashMargin)
	counts := map[string]check.Count{}
	for _, lo := range cr.ops {
		cr.complete(lo, deadline)
	}
	for _, lo := range cr.ops {
		counts[lo.op.Key] = lo.op.CountQuiet()
	}
	s.Notef("%d operations, %d kills, schedule seed %d", len(cr.ops), cr.kills, s.Settings.Seed)
	s.Figure(map[string]string{"kills": strconv.Itoa(cr.kills), "operations": strconv.Itoa(len(cr.ops))})
	return check.CrashUnderLoad(check.CrashLoad{
		Attempts: s.History.After(from), Counts: counts, Events: s.History.Events(),
		LockTimeout: s.Target.LockTimeout, Retention: s.Target.Retention, CheckedAt: time.Now(),
	}, s.Target.Profile)
}

// worker runs operations until stopped: mostly fresh ones, sometimes a retry of an earlier
// operation that has not been acknowledged yet.
func (cr *crashRun) worker(w int) {
	defs := cr.s.Observed()
	for i := 0; !cr.stop.Load() && cr.s.Ctx().Err() == nil; i++ {
		lo := cr.pick(defs, w, i)
		if lo == nil {
			return
		}
		cr.begin(lo.op.Key)
		ctx, cancel := context.WithTimeout(cr.s.Ctx(), 2*time.Second)
		a := lo.op.DoCtx(ctx, framework.Send{Instance: -1})
		cancel()
		cr.end(lo.op.Key)
		if framework.Succeeded(a) {
			cr.mu.Lock()
			lo.acked = true
			cr.mu.Unlock()
		}
		time.Sleep(2 * time.Millisecond)
	}
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
	if len(cr.ops) >= crashMaxOps {
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

// killAge is how long an attempt must have been in flight before the nemesis kills: long
// enough to be past the claim (a few round trips), so that kills land between claim, record
// and completion rather than before anything happened.
const killAge = 15 * time.Millisecond

// nemesis kills and restarts instances through the nemesis on the seeded schedule, each time
// with operations in flight, and resets the storage link once midway when one is declared. Its
// events go into the history, where the checker finds which kills hit which operations.
func (cr *crashRun) nemesis() error {
	s := cr.s
	c := s.Faults.Cluster
	for k := 1; k <= crashKills; k++ {
		if !s.SleepUntil(time.Now().Add(time.Duration(150+cr.rng.IntN(250)) * time.Millisecond)) {
			return nil
		}
		var keys []string
		for wait := 0; wait < 500 && len(keys) == 0; wait++ {
			if keys = cr.inFlight(killAge); len(keys) == 0 {
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
		if k == crashKills/2+1 {
			if err := cr.storageReset(); err != nil {
				return err
			}
		}
		if err := s.Heal(kill); err != nil {
			return err
		}
	}
	s.SleepUntil(time.Now().Add(300 * time.Millisecond))
	return nil
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
