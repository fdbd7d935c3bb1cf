package suites

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/suites/history"
)

// slow-first-attempt: the client gives up while the first attempt is still processing (the
// downstream sink holds its call, longer than the client's timeout and shorter than the
// declared lock timeout) and retries.
//
// The target MUST answer the retry with the in-flight status (or, if the profile allows,
// wait and replay); it MUST NOT execute the operation a second time. Once released: one
// record, one downstream call.
//
// Catches: early-takeover (an in-progress key taken over after a tenth of the lock timeout).
func init() {
	register(&Property{
		Name: "slow-first-attempt",
		Must: `A retry sent while the first attempt is still processing (after the client gave up, before
the lock timeout) MUST get the in-flight status or wait for the replay, and MUST NOT execute the
operation again: once released, one record and one downstream call.`,
		Catches: []string{"early-takeover"},
		Needs:   []string{"downstream", "lock_timeout"},
		Labels:  []string{"fault:downstream"},
		applies: func(e *Env) string {
			switch {
			case e.Faults == nil || e.Faults.Sink == nil:
				return "the target declares no downstream binding: nothing can hold a request in flight"
			case e.Target.LockTimeout <= 0:
				return "the target declares no lock_timeout"
			case e.Target.LockTimeout/3 > e.Settings.MaxWait:
				return sprintf("a third of the lock timeout %v is longer than --max-wait %v", e.Target.LockTimeout, e.Settings.MaxWait)
			}
			return ""
		},
		specs: slowFirstSpecs,
	})
}

func slowFirstSpecs(e *Env) {
	def := e.Target.Operations[0]
	// The client gives up at a third of the lock timeout: past a tenth (where the
	// early-takeover mutant takes over) and well before the real lock timeout.
	giveUp := e.Target.LockTimeout / 3
	It(sprintf("%s: a retry after the client gave up (%v) while the first attempt is held is not executed again", def.Name, giveUp), func() {
		sink := e.Faults.Sink
		op := e.NewOp(def)
		sink.Hold()
		defer sink.Release()
		ctx, cancel := context.WithTimeout(e.done, giveUp)
		firstDone := make(chan history.Attempt, 1)
		go func() { firstDone <- op.DoCtx(ctx, Send{Instance: 0}) }()
		if err := e.waitHeld(op, 1); err != nil {
			cancel()
			e.unknown("the first attempt never reached the downstream provider: %v", err)
		}
		first := <-firstDone
		cancel()
		if first.Outcome == history.OK {
			e.unknown("the first attempt answered (status %d) while its downstream call was held", first.Status)
		}
		retryCtx, retryCancel := e.ctx(1)
		defer retryCancel()
		retryDone := make(chan history.Attempt, 1)
		go func() { retryDone <- op.DoCtx(retryCtx, Send{Instance: 1}) }()
		var retry history.Attempt
		select {
		case retry = <-retryDone:
			if !e.Target.Profile.AcceptsInFlightStatus(retry.Status) {
				Fail(sprintf("the retry while the first attempt is in flight got status %d, want the in-flight status %d:\n%s",
					retry.Status, e.Target.Profile.InFlightStatus, retry))
			}
		case <-time.After(time.Second):
			// The retry waits: allowed (wait-replay) if it is not a second execution.
		}
		if calls, _ := e.Faults.sinkCalls(op.Ref); calls > 1 {
			Fail(sprintf("the retry executed the operation again: the provider got %d calls while the first attempt was in flight", calls))
		}
		sink.Release()
		if retry.Seq == 0 {
			retry = e.ok(<-retryDone)
			expectSuccess(retry, "the waiting retry after release")
		}
		e.eventualSuccess(op, 5*time.Second)
		e.expectRecords(op, 1)
		e.expectDownstreamEffects(op, 1)
		if calls, _ := e.Faults.sinkCalls(op.Ref); calls != 1 {
			Fail(sprintf("the operation reached the provider %d times, want once", calls))
		}
	})
}

// waitHeld waits until the sink holds a call of this operation.
func (e *Env) waitHeld(op *Op, n int) error {
	ctx, cancel := e.ctx(1)
	defer cancel()
	_, err := e.Faults.Sink.WaitHeld(ctx, n)
	return err
}

// eventualSuccess retries an operation until it answers 2xx (the in-flight status is
// waited out), for at most d; it fails the spec when the key stays stuck.
func (e *Env) eventualSuccess(op *Op, d time.Duration) history.Attempt {
	deadline := time.Now().Add(d)
	for {
		a := op.Do(Send{Instance: -1})
		switch {
		case a.Outcome != history.OK:
			// The target may be restarting: keep trying until the deadline.
		case a.Status >= 200 && a.Status < 300:
			return a
		case !e.Target.Profile.AcceptsInFlightStatus(a.Status):
			Fail(sprintf("a retry of %s got status %d:\n%s", op.Def.Name, a.Status, a), 1)
		}
		if time.Now().After(deadline) {
			if a.Outcome != history.OK {
				e.unknown("the target did not answer a retry of %s within %v: %s", op.Def.Name, d, a.Err)
			}
			Fail(sprintf("the key %s of %s is still in flight %v later (stuck):\n%s", op.Key, op.Def.Name, d, a), 1)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
