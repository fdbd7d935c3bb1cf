package check

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Bounds of the backoff checker.
const (
	// backoffSlack is how far outside its declared envelope a delay may fall: early, or late on
	// a short envelope. A later retry may also be the machine's doing (a runner's scheduling
	// stall delays the client's timer, never advances it): late, a delay may pass the envelope
	// by a quarter of its upper bound when that is more (lateSlack).
	backoffSlack = 20 * time.Millisecond
	// hammering is the delay under which a retry is hammering whatever the envelope.
	hammering = 10 * time.Millisecond
	// jitterSample is how many first-retry delays the jitter judgement needs.
	jitterSample = 6
	// minJitterSpan is the least spread of jittered first retries.
	minJitterSpan = 5 * time.Millisecond
)

// Backoff judges the delays before a client's retries (those a Retry-After the client honours
// does not govern): each MUST fall within the declared envelope of its retry, at most 20 ms early
// and at most max(20 ms, a quarter of its upper bound) late (not counting the time the harness
// saw its own process stalled within the delay: ClientOp.Stalls), and none under 10 ms (no-backoff,
// a deviation); with jitter declared (full, equal, or a range of the cap), of the first-retry
// delays of at least 6 operations the fastest MUST come in the lower three quarters of the
// envelope, and the fastest three quarters (a loaded machine delays retries, never advances them)
// MUST span at least max(5 ms, 10% of the envelope) (no-jitter). Every attempt is bounded
// (everyAttempt: the retries under 10 ms are its).
func Backoff(r ClientRun, p targets.RetryPolicy) Result {
	j := newJudge(consumerProfile)
	j.opsSent(r)
	j.everyAttempt(r, p)
	var first []time.Duration
	var firstAt []history.Attempt
	for _, op := range r.sentOps(p) {
		for n := 1; n < len(op.Attempts); n++ {
			if op.exempt(n) {
				continue
			}
			prev, a := op.Attempts[n-1], op.Attempts[n]
			if prev.RetryAfter > 0 && p.HonoursRetryAfterOn(prev.Status) {
				continue // the Retry-After governs this delay
			}
			d := a.Start.Sub(prev.Answered)
			j.backoffDelay(op, n, d, p.Backoff)
			if n == 1 {
				first = append(first, d)
				firstAt = append(firstAt, a)
			}
		}
	}
	if p.Backoff.Jittered() {
		j.jitter(p.Backoff, first, firstAt)
	}
	return j.result()
}

// backoffDelay judges the delay d before retry n of an operation against the envelope (a delay
// under 10 ms is everyAttempt's: hammering).
func (j *judge) backoffDelay(op ClientOp, n int, d time.Duration, b targets.Backoff) {
	prev, a := op.Attempts[n-1], op.Attempts[n]
	lo, hi := b.Envelope(n)
	switch {
	case d < hammering:
	case d < lo-backoffSlack || d-op.stall(n) > hi+lateSlack(hi):
		j.add(clientAnomaly(reports.KindNoBackoff, a, fmt.Sprintf(
			"retry %d of operation %s came %v after %s%s, outside the declared backoff's [%v, %v] (%v early, %v late allowed)", n, op.Name(),
			d.Round(time.Millisecond), answerWords(prev), stallWords(op.stall(n)), lo, hi, backoffSlack, lateSlack(hi)), prev.Seq, a.Seq))
	}
}

// stallWords says how long the harness was stalled within a delay, or "" when it was not.
func stallWords(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%v of it with the harness's process stalled, not counted)", d.Round(time.Millisecond))
}

// jitter judges the first-retry delays of a run's operations (first, each before the attempt of
// firstAt) against a jittered envelope.
func (j *judge) jitter(b targets.Backoff, first []time.Duration, firstAt []history.Attempt) {
	firstSeqs := make([]int64, len(firstAt))
	for i, a := range firstAt {
		firstSeqs[i] = a.Seq
	}
	if len(first) < jitterSample {
		j.unknownf("only %d operations were retried; jitter needs the first retries of %d", len(first), jitterSample)
		return
	}
	lo, hi := b.Envelope(1)
	sorted := slices.Sorted(slices.Values(first))
	// A loaded machine only ever delays a retry (a stalled timer, a late read), never advances
	// it. So the fastest first retry is judged against the envelope: jittered, the fastest of n
	// comes in its lower three quarters but with probability 4^-n (under 0.03% from 6 on);
	// without jitter, at the cap, it never does, however much the others were delayed.
	if top := lo + (hi-lo)*3/4; hi > lo && sorted[0] >= top {
		j.add(clientAnomaly(reports.KindNoJitter, firstAt[0], fmt.Sprintf(
			"none of the first retries of %d operations came in the lower three quarters of the declared %s jitter's [%v, %v]: the fastest came %v after its failure",
			len(first), b.JitterWords(), lo, hi, sorted[0].Round(time.Millisecond)), firstSeqs...))
		return
	}
	// The delays of a client without jitter below its cap are spread by the same stalls: the
	// slowest quarter is left out of the spread.
	want := max(minJitterSpan, (hi-lo)/10)
	kept := sorted[:len(sorted)-len(sorted)/4]
	if span := kept[len(kept)-1] - kept[0]; span < want {
		j.add(clientAnomaly(reports.KindNoJitter, firstAt[0], fmt.Sprintf(
			"the fastest %d of the first retries of %d operations came between %v and %v after their failures: a spread of %v, under the %v a %s jitter gives",
			len(kept), len(first), kept[0].Round(time.Millisecond), kept[len(kept)-1].Round(time.Millisecond), span.Round(time.Millisecond),
			want, b.JitterWords()), firstSeqs...))
	}
}

// lateSlack is how late past an envelope's upper bound hi a delay may come: max(20 ms, hi/4).
func lateSlack(hi time.Duration) time.Duration { return max(backoffSlack, hi/4) }
