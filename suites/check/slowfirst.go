package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// SlowFirst is what the slow-first-attempt property observed: a first attempt held in flight
// until the client gave up, a retry while it was held, and retries after its release.
type SlowFirst struct {
	// First is the attempt the client gave up on.
	First history.Attempt
	// Retry is the retry sent while the first was held: answered then, or (Waited) only after
	// the release.
	Retry  history.Attempt
	Waited bool
	// HeldCalls are the downstream calls while the first attempt was held.
	HeldCalls Downstream
	// Final are the retries after the release, until one succeeded.
	Final Eventually
	// Records and Downstream are counted at the end.
	Records    Count
	Downstream Downstream
}

// SlowFirstAttempt judges a retry sent while the first attempt is still in flight
// (slow-first-attempt): it MUST get the in-flight status or wait for the replay, and MUST NOT
// execute the operation again; once released, one record and one downstream call.
func SlowFirstAttempt(s SlowFirst, p targets.Profile) Result {
	j := newJudge(p)
	if s.First.Outcome == history.OK {
		return Unknownf("the first attempt answered (status %d) while it was held in flight", s.First.Status)
	}
	if !s.Waited && j.answered(s.Retry, "the retry while the first attempt is in flight") {
		switch {
		case p.AcceptsInFlightStatus(s.Retry.Status):
		case p.Success(s.Retry.Status):
			j.add(anomaly(reports.KindDuplicateExecution, s.Retry, fmt.Sprintf(
				"the retry while the first attempt was in flight got %d: it was executed a second time", s.Retry.Status), s.First.Seq, s.Retry.Seq))
		case p.InFlight == targets.InFlightWaitReplay:
			j.wrongStatus(s.Retry, "no answer before the first attempt completes (in_flight: wait-replay)", "the retry while the first attempt is in flight")
		default:
			j.wrongStatus(s.Retry, "the in-flight status "+p.InFlightStatus.String(), "the retry while the first attempt is in flight")
		}
	}
	j.calls(s.HeldCalls, 1, s.Records, "while the first attempt was in flight", s.First.Seq, s.Retry.Seq)
	if s.Waited {
		j.success(s.Retry, "the waiting retry after the release")
	}
	if _, ok := j.completes(s.Final, "a retry after the release", j.succeeded); !ok {
		return j.result()
	}
	j.records(s.Records, 1, s.First.Seq)
	j.effects(s.Downstream, 1, s.Records, s.First.Seq)
	if len(j.r.Anomalies) == 0 {
		j.calls(s.Downstream, 1, s.Records, "in all", s.First.Seq)
	}
	return j.result()
}
