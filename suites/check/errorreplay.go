package check

import (
	"fmt"
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// ErrorRetries is what the error-replay property observed: a first attempt that failed (its
// downstream provider, or a fail-next hook, made it fail) and the retries after it.
type ErrorRetries struct {
	// First is the attempt that failed.
	First history.Attempt
	// Retries are the retries, until one got a final answer (not the in-flight status).
	Retries Eventually
	// Records and Downstream are counted at the end.
	Records    Count
	Downstream Downstream
}

// ErrorReplay judges the retries after a failed attempt (error-replay) against the declared
// error policy: under replay the stored error MUST be replayed as it was first sent (without a
// second downstream call); under retry the operation MUST execute again and end with one record
// and one downstream effect. A key that answers the in-flight status for longer than allowed is
// stuck.
func ErrorReplay(e ErrorRetries, p targets.Profile) Result {
	j := newJudge(p)
	if !j.answered(e.First, "the failing attempt") {
		return j.result()
	}
	if e.First.Status < 500 {
		return Unknownf("the target did not report the failure (attempt #%d got %d): the error policy cannot be observed", e.First.Seq, e.First.Status)
	}
	j.inFlightAfterAnswer(e)
	if p.ErrorPolicy == targets.ErrorRetry {
		if final, ok := j.completes(e.Retries, "the retry after the error", succeeded); ok {
			j.records(e.Records, 1, e.First.Seq, final.Seq)
			j.effects(e.Downstream, 1, e.Records, e.First.Seq, final.Seq)
		}
		return j.result()
	}
	final, ok := j.completes(e.Retries, "the retry after the error", func(a history.Attempt) bool {
		return !p.AcceptsInFlightStatus(a.Status) && a.Status != http.StatusTooManyRequests
	})
	if !ok {
		return j.result()
	}
	if is2xx(final.Status) {
		an := anomaly(reports.KindReplayDiffs, final, fmt.Sprintf(
			"the retry after the error got %d: it was executed again instead of replaying the stored %d (replay policy)",
			final.Status, e.First.Status), e.First.Seq, final.Seq)
		an.What = "status"
		j.add(an)
		return j.result()
	}
	if j.same(e.First, final, "the replayed error") {
		j.noRecord(e.Records, "the failed attempt, whose error is replayed,", e.First.Seq)
	}
	if e.Downstream.Taken && e.Downstream.Calls > 1 {
		an := anomaly(reports.KindReplayDiffs, final, fmt.Sprintf(
			"the retry after the error reached the downstream provider again (%d calls): the replay policy replays the stored error",
			e.Downstream.Calls), e.First.Seq, final.Seq)
		an.What = "status"
		j.add(an)
	}
	return j.result()
}

// heldAfterAnswer is how much longer than the failing attempt the first retry may take, under an
// in-flight policy that waits (wait-replay, either), before it counts as held in flight.
const heldAfterAnswer = 100 * time.Millisecond

// inFlightAfterAnswer judges the first retry, sent once the error was answered: the failed
// attempt is over, so the key MUST NOT be in flight any more. The in-flight status (or, where the
// target waits instead, a retry held longer than the failed attempt took plus heldAfterAnswer)
// shows an error recorded after its answer (fire-and-forget): a retry sent at once is told "in
// progress" for a request that has finished.
func (j *judge) inFlightAfterAnswer(e ErrorRetries) {
	if len(e.Retries.Attempts) == 0 {
		return
	}
	r := e.Retries.Attempts[0]
	if r.Outcome != history.OK {
		return
	}
	took, first := r.End.Sub(r.Start), e.First.End.Sub(e.First.Start)
	switch {
	case j.p.InFlight != targets.InFlightWaitReplay && j.p.AcceptsInFlightStatus(r.Status):
		j.add(anomaly(reports.KindWrongStatus, r, fmt.Sprintf(
			"the retry sent once the error (#%d) was answered got %d: in flight after its error was answered (the error is recorded after the answer)",
			e.First.Seq, r.Status), e.First.Seq, r.Seq))
	case j.p.AcceptsWaitReplay() && took > first+heldAfterAnswer:
		j.add(anomaly(reports.KindWrongStatus, r, fmt.Sprintf(
			"the retry sent once the error (#%d) was answered was held %v (the failed attempt took %v): in flight after its error was answered (the error is recorded after the answer)",
			e.First.Seq, took.Round(time.Millisecond), first.Round(time.Millisecond)), e.First.Seq, r.Seq))
	}
}
