package suites

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/suites/history"
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
	register(&Property{
		Name: "crash-under-load",
		Must: `Under concurrent load with retries and at least five SIGKILLs and restarts (each with
operations in flight), no operation MAY have two records, every operation acknowledged with a 2xx
MUST have exactly one, and no key MAY stay stuck past the lock timeout.`,
		Catches: []string{"split-write"},
		Needs:   []string{"lifecycle (durable: true)", "lock_timeout", "operations[].observer", "storage (optional: latency and resets)"},
		Labels:  []string{"fault:process", "fault:storage"},
		applies: func(e *Env) string {
			if r := needsCrash(e); r != "" {
				return r
			}
			if len(e.observed()) == 0 {
				return "no operation has an observer: records cannot be counted"
			}
			return ""
		},
		specs: crashLoadSpecs,
	})
}

// Shape of the crash-under-load run.
const (
	crashKills   = 8
	crashWorkers = 4
	crashMaxOps  = 400
)

// loadOp is one operation of the crash-under-load history.
type loadOp struct {
	op    *Op
	acked bool      // got a 2xx
	first time.Time // when its first attempt was sent
}

// crashRun is the state of one crash-under-load run.
type crashRun struct {
	e        *Env
	rng      *rand.Rand
	mu       sync.Mutex
	ops      []*loadOp
	inflight map[string]int       // key -> attempts in flight
	since    map[string]time.Time // key -> when its oldest attempt in flight started
	stop     atomic.Bool
	kills    []string // what the nemesis did, for the evidence
}

func crashLoadSpecs(e *Env) {
	It(sprintf("%d SIGKILLs under concurrent load leave exactly one record per operation (seed %d)", crashKills, e.Settings.Seed), func() {
		cr := &crashRun{e: e, rng: rand.New(rand.NewPCG(uint64(e.Settings.Seed), 0xc4a5)), inflight: map[string]int{}, since: map[string]time.Time{}}
		cr.storageLatency(true)
		var wg sync.WaitGroup
		for w := range crashWorkers {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				cr.worker(w)
			}()
		}
		nemesisErr := cr.nemesis()
		cr.stop.Store(true)
		wg.Wait()
		cr.storageLatency(false)
		e.Client.CloseIdle()
		for _, k := range cr.kills {
			e.notef("%s", k)
		}
		if nemesisErr != nil {
			Fail("nemesis: " + nemesisErr.Error())
		}
		cr.check()
	})
}

// worker runs operations until stopped: mostly fresh ones, sometimes a retry of an earlier
// operation that has not been acknowledged yet.
func (cr *crashRun) worker(w int) {
	defs := cr.e.observed()
	for i := 0; !cr.stop.Load(); i++ {
		lo := cr.pick(defs, w, i)
		if lo == nil {
			return
		}
		cr.begin(lo.op.Key)
		cr.mu.Lock()
		if lo.first.IsZero() {
			lo.first = time.Now()
		}
		cr.mu.Unlock()
		ctx, cancel := context.WithTimeout(cr.e.done, 2*time.Second)
		a := lo.op.DoCtx(ctx, Send{Instance: -1})
		cancel()
		cr.end(lo.op.Key)
		if a.Outcome == history.OK && a.Status >= 200 && a.Status < 300 {
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
	lo := &loadOp{op: cr.e.NewOp(defs[(w+i)%len(defs)])}
	if ts := cr.e.Target.Tenants; len(ts) > 1 {
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

// nemesis kills and restarts instances on the seeded schedule, each time with operations
// in flight, and resets the storage link once midway when one is declared.
func (cr *crashRun) nemesis() error {
	c := cr.e.Faults.Cluster
	for k := 1; k <= crashKills; k++ {
		cr.e.sleepUntil(time.Now().Add(time.Duration(150+cr.rng.IntN(250)) * time.Millisecond))
		var keys []string
		for wait := 0; wait < 500 && len(keys) == 0; wait++ {
			if keys = cr.inFlight(killAge); len(keys) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		i := cr.rng.IntN(c.Size())
		cr.e.halt() // no kill or restart once the run is over: nothing would stop the process
		c.Kill(i)
		cr.kills = append(cr.kills, sprintf("kill %d at %s: SIGKILL instance %d with %d operations in flight: %s",
			k, time.Now().Format("15:04:05.000"), i, len(keys), strings.Join(firstN(keys, 8), ", ")))
		if k == crashKills/2+1 {
			cr.storageReset()
		}
		cr.e.halt()
		ctx, cancel := context.WithTimeout(cr.e.done, time.Minute)
		err := c.Start(ctx, i)
		cancel()
		if err != nil {
			cr.e.halt()
			return err
		}
	}
	cr.e.sleepUntil(time.Now().Add(300 * time.Millisecond))
	return nil
}

// storageLatency adds (or heals) latency on the storage link when one is declared.
func (cr *crashRun) storageLatency(on bool) {
	s := cr.e.Faults.Storage
	if s == nil {
		return
	}
	ctx, cancel := cr.e.ctx(1)
	defer cancel()
	f := s.Latency(5 * time.Millisecond)
	if on {
		_ = cr.e.Faults.Nemesis.Inject(ctx, f)
	} else {
		_ = cr.e.Faults.Nemesis.Heal(ctx, f)
	}
}

// storageReset cuts the storage link's connections once (when one is declared).
func (cr *crashRun) storageReset() {
	s := cr.e.Faults.Storage
	if s == nil {
		return
	}
	ctx, cancel := cr.e.ctx(1)
	defer cancel()
	f := s.Reset()
	if cr.e.Faults.Nemesis.Inject(ctx, f) == nil {
		cr.kills = append(cr.kills, "storage link reset at "+time.Now().Format("15:04:05.000"))
		time.Sleep(100 * time.Millisecond)
		_ = cr.e.Faults.Nemesis.Heal(ctx, f)
	}
}

// check retries every operation to completion, then counts records.
func (cr *crashRun) check() {
	e := cr.e
	var problems []string
	var bad []string
	deadline := time.Now().Add(e.Target.LockTimeout + crashMargin)
	for _, lo := range cr.ops {
		if last := cr.complete(lo, deadline); last.Outcome != history.OK || e.Target.Profile.AcceptsInFlightStatus(last.Status) {
			problems = append(problems, sprintf("key %s stuck: still %s %v after the load", lo.op.Key,
				describeAnswer(last), e.Target.LockTimeout+crashMargin))
			bad = append(bad, lo.op.Key)
		}
	}
	for _, lo := range cr.ops {
		n, err := lo.op.count(false)
		switch {
		case err != nil:
			e.unknown("observer failed for %s: %v", lo.op.Ref, err)
		case n > 1 && cr.expired(lo):
			e.notef("key %s: %d records, but it was retried after the declared retention (a new request by then)", lo.op.Key, n)
		case n > 1 || (lo.acked && n != 1):
			e.noteCount(lo.op, n, nil)
			problems = append(problems, sprintf("key %s (acknowledged: %v): %d records", lo.op.Key, lo.acked, n))
			bad = append(bad, lo.op.Key)
		}
	}
	e.notef("%d operations, %d kills", len(cr.ops), len(cr.kills))
	if len(problems) > 0 {
		e.keepKeys(firstN(bad, 6))
		Fail(sprintf("%d of %d operations violated crash-under-load (seed %d):\n%s", len(problems), len(cr.ops),
			e.Settings.Seed, strings.Join(firstN(problems, 20), "\n")))
	}
}

// expired reports whether an operation was still being retried after the declared
// retention, when a retry is legitimately a new request.
func (cr *crashRun) expired(lo *loadOp) bool {
	r := cr.e.Target.Retention
	return r > 0 && cr.e.Target.Profile.Expired == targets.ExpiredNew && time.Since(lo.first) > r
}

// complete retries an unacknowledged operation until it answers 2xx or the deadline passes,
// and returns its last answer (an acknowledged one is done: its answer is not asked again,
// since a key past its retention would be processed as new).
func (cr *crashRun) complete(lo *loadOp, deadline time.Time) history.Attempt {
	cr.mu.Lock()
	acked := lo.acked
	cr.mu.Unlock()
	if acked {
		return history.Attempt{Outcome: history.OK, Status: http.StatusOK}
	}
	for {
		a := lo.op.Do(Send{Instance: -1})
		if a.Outcome == history.OK && a.Status >= 200 && a.Status < 300 {
			cr.mu.Lock()
			lo.acked = true
			cr.mu.Unlock()
			return a
		}
		if time.Now().After(deadline) {
			return a
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// describeAnswer says what an attempt got, for messages.
func describeAnswer(a history.Attempt) string {
	if a.Outcome != history.OK {
		return "without an answer (" + a.Err + ")"
	}
	return sprintf("answered %d", a.Status)
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], sprintf("... and %d more", len(s)-n))
	}
	return s
}
