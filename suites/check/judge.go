package check

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// judge accumulates a Result; every checker is built from its steps. A step that cannot be
// taken (an attempt without an answer) notes why the result is unknown and reports false.
type judge struct {
	r Result
	p targets.Profile
}

func newJudge(p targets.Profile) *judge { return &judge{p: p} }

// consumerProfile is the profile the consumer checkers judge with: a consumer answers the
// in-flight status (409) while another delivery of the event holds its claim.
var consumerProfile, _ = targets.Profiles("ietf")

func (j *judge) add(a reports.Anomaly) { j.r.Anomalies = append(j.r.Anomalies, a) }

func (j *judge) unknownf(format string, args ...any) {
	j.r.Unknown = append(j.r.Unknown, fmt.Sprintf(format, args...))
}

// answered reports whether a got an answer; an attempt that got none (or was never sent)
// makes the result unknown: the work may or may not have happened.
func (j *judge) answered(a history.Attempt, what string) bool {
	switch a.Outcome {
	case history.OK:
		return true
	case "":
		j.unknownf("%s was not sent", what)
	case history.Unknown:
		j.unknownf("%s (attempt #%d) got no answer: %s", what, a.Seq, a.Err)
	default:
		j.unknownf("%s (attempt #%d) could not be sent: %s", what, a.Seq, a.Err)
	}
	return false
}

// success reports whether a got a 2xx; any other answer is a wrong-status (or server-error)
// anomaly.
func (j *judge) success(a history.Attempt, what string) bool {
	if !j.answered(a, what) {
		return false
	}
	switch {
	case j.p.Success(a.Status):
		return true
	case is2xx(a.Status):
		j.wrongStatus(a, "a 2xx other than the in-flight answer "+j.p.InFlightStatus.String()+" (in_flight: status-resource)", what)
		return false
	}
	j.wrongStatus(a, "a 2xx", what)
	return false
}

// status reports whether a got a status in want; another answer is an anomaly.
func (j *judge) status(a history.Attempt, want targets.StatusSet, what string) bool {
	if !j.answered(a, what) {
		return false
	}
	if want.Contains(a.Status) {
		return true
	}
	j.wrongStatus(a, want.Words(), what)
	return false
}

// wrongStatus adds a server-error (5xx) or wrong-status anomaly.
func (j *judge) wrongStatus(a history.Attempt, want, what string) {
	kind := reports.KindWrongStatus
	if a.Status >= 500 {
		kind = reports.KindServerError
	}
	j.add(anomaly(kind, a, fmt.Sprintf("expected %s for %s, got %d", want, what, a.Status), a.Seq))
}

// same reports whether again replays first (status, headers and body, the profile's volatile
// parts left out); a difference is a replay-differs anomaly that says in what.
func (j *judge) same(first, again history.Attempt, what string) bool {
	diffs, unknown := ReplayDiffs(first, again, j.p)
	if unknown != "" {
		j.unknownf("%s (attempt #%d): %s", what, again.Seq, unknown)
		return false
	}
	if len(diffs) == 0 {
		return true
	}
	an := anomaly(reports.KindReplayDiffs, again,
		fmt.Sprintf("%s differs from %s at %s", what, replayBasis(first, again, j.p), strings.Join(diffs, ", ")), first.Seq, again.Seq)
	an.What = diffPart(diffs)
	j.add(an)
	return false
}

// diffPart says which part of an answer a Compare list is about: status, header or body (the
// most significant first).
func diffPart(diffs []string) string {
	part := "body"
	for _, d := range diffs {
		switch {
		case strings.HasPrefix(d, "status"):
			return "status"
		case strings.HasPrefix(d, "reference"):
			part = "reference"
		case strings.HasPrefix(d, "header ") && part != "reference":
			part = "header"
		}
	}
	if part == "reference" {
		return part
	}
	if part == "header" && slices.ContainsFunc(diffs, func(d string) bool { return !strings.HasPrefix(d, "header ") }) {
		return "body"
	}
	return part
}

// replayHeader checks that a replay carries the profile's replay header.
func (j *judge) replayHeader(a history.Attempt, what string) {
	rh := j.p.ReplayHeader
	if rh.Name == "" || a.Outcome != history.OK {
		return
	}
	got, ok := a.RespHeader[http.CanonicalHeaderKey(rh.Name)]
	switch {
	case !ok:
		an := anomaly(reports.KindReplayDiffs, a, fmt.Sprintf("%s lacks the replay header %s", what, rh.Name), a.Seq)
		an.What = "header"
		j.add(an)
	case rh.Value != "" && !slices.Contains(got, rh.Value):
		an := anomaly(reports.KindReplayDiffs, a, fmt.Sprintf("%s carries %s: %s, want %q", what, rh.Name, strings.Join(got, ", "), rh.Value), a.Seq)
		an.What = "header"
		j.add(an)
	}
}

// records checks a record count against the number of operations acknowledged: more is a
// duplicate, fewer a missing record. A count not taken is not checked; one that failed makes the
// result unknown.
func (j *judge) records(c Count, want int, seqs ...int64) {
	if !j.counted(c) {
		return
	}
	if c.Failed && c.N < want { // its status resource said it failed: not acknowledged
		return
	}
	switch {
	case c.N > want:
		j.add(countAnomaly(reports.KindDuplicateRecord, c,
			fmt.Sprintf("%d business records for %s, want %d: it was executed more than once", c.N, c.subject(), want), seqs...))
	case c.N < want:
		j.add(countAnomaly(reports.KindMissingRecord, c,
			fmt.Sprintf("%d business records for %s, want %d: an operation acknowledged with a 2xx left no record", c.N, c.subject(), want), seqs...))
	}
}

// notMore checks a record count against an upper bound only: more is a duplicate; fewer is not
// held against the target, since an operation that was not acknowledged (rejected, or without an
// answer) may or may not have left its record.
func (j *judge) notMore(c Count, want int, seqs ...int64) {
	if j.counted(c) && c.N > want {
		j.records(c, want, seqs...)
	}
}

// recordsIf checks a record count as records does when the operations were acknowledged, else
// as notMore does: an operation without a 2xx may or may not have left its record, so only a
// duplicate is a violation.
func (j *judge) recordsIf(acked bool, c Count, want int, seqs ...int64) {
	if acked {
		j.records(c, want, seqs...)
	} else {
		j.notMore(c, want, seqs...)
	}
}

// noRecord checks that a rejected request left no record.
func (j *judge) noRecord(c Count, what string, seqs ...int64) {
	if j.counted(c) && c.N > 0 {
		j.add(countAnomaly(reports.KindRejectedButRecorded, c,
			fmt.Sprintf("%s left %d business records for %s", what, c.N, c.subject()), seqs...))
	}
}

// counted reports whether a count can be checked; a failed one makes the result unknown.
func (j *judge) counted(c Count) bool {
	if !c.Taken || c.Unsettled {
		return false
	}
	if c.Err != "" {
		j.unknownf("the observer could not count the records of %s: %s", c.subject(), c.Err)
		return false
	}
	return true
}

// subject names what a count counted, for messages.
func (c Count) subject() string {
	s := c.Op
	if c.Ref != "" {
		s += " ref " + c.Ref
	}
	if c.Tenant != "" && c.Tenant != "-" {
		s += " (tenant " + c.Tenant + ")"
	}
	return strings.TrimSpace(s)
}

// Eventually is a key retried until it completed or the time allowed for it ran out.
type Eventually struct {
	// Attempts are the retries, in order.
	Attempts []history.Attempt
	// Within is how long the key was given to complete.
	Within time.Duration
}

// completes reports the attempt with which a retried key completed (done reports a final
// answer). An answer that is neither final, the in-flight status nor 429 is an anomaly; a key
// that still answered the in-flight status at the end is stuck; one that never answered, or was
// still rate limited, is unknown.
func (j *judge) completes(ev Eventually, what string, done func(history.Attempt) bool) (history.Attempt, bool) {
	if len(ev.Attempts) == 0 {
		j.unknownf("%s was not retried", what)
		return history.Attempt{}, false
	}
	for _, a := range ev.Attempts {
		switch {
		case a.Outcome != history.OK:
		case done(a):
			return a, true
		case !j.p.AcceptsInFlightStatus(a.Status) && a.Status != http.StatusTooManyRequests:
			want := "the in-flight status or the final answer"
			if j.p.InFlight == targets.InFlightWaitReplay {
				want = "the final answer (in_flight: wait-replay)"
			}
			j.wrongStatus(a, want, what)
			return a, false
		}
	}
	last := ev.Attempts[len(ev.Attempts)-1]
	switch {
	case last.Outcome != history.OK:
		j.unknownf("%s got no answer within %v: %s", what, ev.Within, last.Err)
		return last, false
	case !j.p.AcceptsInFlightStatus(last.Status):
		// 429 (tolerated above) is not the in-flight status: the key may be free behind the rate limit.
		j.unknownf("%s was still rate limited (%d) %v later: whether the key completes cannot be told", what, last.Status, ev.Within)
		return last, false
	}
	j.add(anomaly(reports.KindStuckKey, last, fmt.Sprintf("%s still answered %d (in flight) %v later: the key is stuck",
		what, last.Status, ev.Within), ev.Attempts[0].Seq, last.Seq))
	return last, false
}

func is2xx(status int) bool { return status >= 200 && status < 300 }

// succeeded reports a 2xx answer.
func succeeded(a history.Attempt) bool { return a.Outcome == history.OK && is2xx(a.Status) }

// succeeded reports a success under the judge's profile: a 2xx other than the in-flight answer
// of in_flight: status-resource.
func (j *judge) succeeded(a history.Attempt) bool {
	return a.Outcome == history.OK && j.p.Success(a.Status)
}

// sameBody reports whether two answers carry the same body (JSON by value, the profile's
// ignored paths left out). An empty first body is never "the same": an empty answer says nothing
// about whose answer it is.
func (j *judge) sameBody(a, b history.Attempt) bool {
	if a.Reference != "" && b.Reference != "" { // an operation's answer: the same operation or not
		return a.Reference == b.Reference
	}
	if len(bytes.TrimSpace(a.RespBody)) == 0 {
		return false
	}
	return len(CompareBodies(a.RespBody, b.RespBody, j.p.Ignore)) == 0
}

// result returns what the judge found.
func (j *judge) result() Result { return j.r }
