package suites

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/suites/history"
)

// crash-after-claim: the process dies between claiming a key and writing its result (the
// sink holds the downstream call, the harness SIGKILLs the target), is restarted on the same
// address and store, and the client retries.
//
// The target MUST complete the retry within the declared lock timeout plus a margin, with
// exactly one record and one downstream effect: every attempt sends the provider the same
// downstream key.
//
// Catches: stuck-lock (the claim of a dead process is never taken over), fresh-downstream-key
// (the retry reaches the provider with a new key: a second charge).
func init() {
	register(&Property{
		Name: "crash-after-claim",
		Must: `After the target is SIGKILLed between claiming a key and writing its result and restarted,
a retry with the same key MUST complete within the lock timeout plus a margin, with exactly one
record and one downstream effect (the same downstream key on every attempt).`,
		Catches: []string{"stuck-lock", "fresh-downstream-key"},
		Needs:   []string{"lifecycle (durable: true)", "downstream", "lock_timeout"},
		Labels:  []string{"fault:process", "fault:downstream"},
		applies: func(e *Env) string {
			if r := needsCrash(e); r != "" {
				return r
			}
			if e.Faults.Sink == nil {
				return "the target declares no downstream binding: nothing can hold it between claim and write"
			}
			return ""
		},
		specs: crashClaimSpecs,
	})
}

// needsCrash says why the process-fault properties do not apply, or "".
func needsCrash(e *Env) string {
	switch {
	case e.Faults == nil || e.Faults.Cluster == nil:
		return "the target declares no lifecycle: the harness cannot kill and restart it"
	case !e.Target.Lifecycle.Durable:
		return "the target's store is not durable (lifecycle.durable is false): a killed process loses its keys"
	case e.Target.LockTimeout <= 0:
		return "the target declares no lock_timeout"
	case e.Target.LockTimeout+crashMargin > e.Settings.MaxWait:
		return sprintf("the lock timeout %v plus %v is longer than --max-wait %v", e.Target.LockTimeout, crashMargin, e.Settings.MaxWait)
	}
	return ""
}

// crashMargin is how long past the lock timeout a stuck key is waited for.
const crashMargin = 3 * time.Second

func crashClaimSpecs(e *Env) {
	def := e.Target.Operations[0]
	if obs := e.observed(); len(obs) > 0 {
		def = obs[0]
	}
	It(sprintf("%s: after a SIGKILL between claim and write and a restart, the retry completes once", def.Name), func() {
		sink, cluster := e.Faults.Sink, e.Faults.Cluster
		op := e.NewOp(def)
		sink.Hold()
		defer sink.Release()
		ctx, cancel := context.WithCancel(e.done)
		defer cancel()
		firstDone := make(chan history.Attempt, 1)
		go func() { firstDone <- op.DoCtx(ctx, Send{Instance: 0}) }()
		if err := e.waitHeld(op, 1); err != nil {
			e.unknown("the first attempt never reached the downstream provider: %v", err)
		}
		cluster.Kill(0)
		e.notef("%s: SIGKILL instance 0 with key %s claimed and its downstream call held", time.Now().Format(time.RFC3339Nano), op.Key)
		first := <-firstDone
		if first.Outcome == history.OK {
			e.unknown("the first attempt answered (status %d) although its process was killed", first.Status)
		}
		e.halt() // no restart once the run is over: nothing would stop the process
		startCtx, startCancel := context.WithTimeout(e.done, time.Minute)
		defer startCancel()
		if err := cluster.Start(startCtx, 0); err != nil {
			e.halt()
			Fail("cannot restart the target: " + err.Error())
		}
		e.Client.CloseIdle() // connections to the killed process are dead
		sink.Release()
		final := e.eventualSuccess(op, e.Target.LockTimeout+crashMargin)
		e.expectSame(final, e.ok(op.Do(Send{Instance: -1})), "a retry after completion")
		e.expectRecords(op, 1)
		e.expectDownstreamEffects(op, 1)
	})
}
