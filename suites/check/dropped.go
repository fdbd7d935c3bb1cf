package check

import (
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Dropped is what the dropped-response property observed: an attempt whose response was cut
// after the target processed it, then two retries.
type Dropped struct {
	// Lost is the attempt whose response was cut.
	Lost history.Attempt
	// Retry and Again are the retries with the same key.
	Retry, Again history.Attempt
	// Records and Downstream are counted after the retries.
	Records    Count
	Downstream Downstream
}

// DroppedResponse judges a retry after a lost response (dropped-response): it MUST get the
// replay of the original (a 2xx with the replay header; a second retry answers the same) with
// one record and one downstream effect.
func DroppedResponse(d Dropped, p targets.Profile) Result {
	j := newJudge(p)
	if d.Lost.Outcome == history.OK {
		return Unknownf("the fault did not cut the response (attempt #%d got %d)", d.Lost.Seq, d.Lost.Status)
	}
	if !j.success(d.Retry, "the retry after the lost response") {
		return j.result()
	}
	j.replayHeader(d.Retry, "the retry after the lost response")
	if j.answered(d.Again, "a second retry") {
		j.same(d.Retry, d.Again, "a second retry")
	}
	j.records(d.Records, 1, d.Lost.Seq, d.Retry.Seq)
	j.effects(d.Downstream, 1, d.Records, d.Lost.Seq, d.Retry.Seq)
	return j.result()
}
