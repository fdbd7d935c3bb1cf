package check

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// accepted is a 202 of the test operation naming operation ref (its Location and body).
func accepted(seq int64, ref string) history.Attempt {
	a := sent(seq, 202, `{"id":"`+strings.TrimPrefix(ref, "/ops/")+`","status":"pending"}`, "Location", ref)
	a.Reference = ref
	return a
}

// withRead is a with the fresh read of the resource url made after it (body).
func withRead(a history.Attempt, url, body string) history.Attempt {
	a.Current = &history.Read{URL: url, At: a.End.Add(time.Millisecond), Status: 200, Body: []byte(body)}
	return a
}

func replayReturns(mode targets.ReplayReturns) func(*targets.Profile) {
	return func(p *targets.Profile) { p.ReplayReturns = mode }
}

func statusResource(p *targets.Profile) {
	p.InFlight, p.InFlightStatus = targets.InFlightStatusResource, targets.Status(202)
}

// Every replay_returns compares a replay with what it promises: the first answer, the resource's
// current representation (a fresh read after the replay), or the first answer's reference.
func TestReplayReturns(t *testing.T) {
	const (
		created   = `{"id":"t1","status":"created"}`
		confirmed = `{"id":"t1","status":"confirmed"}`
	)
	first := withRead(sent(1, 201, created), "/things/t1", confirmed)
	tests := []struct {
		name     string
		mode     targets.ReplayReturns
		attempts []history.Attempt
		verdict  reports.Verdict
		want     []string
		says     []string
	}{
		{
			name:     "original: the same 202 and reference",
			attempts: []history.Attempt{accepted(1, "/ops/o1"), accepted(2, "/ops/o1")},
			verdict:  reports.Pass,
		},
		{
			name:     "original: a replay naming another operation",
			attempts: []history.Attempt{accepted(1, "/ops/o1"), accepted(2, "/ops/o2")},
			verdict:  reports.Fail, want: []string{"replay-differs what=reference seqs=1,2"},
			says: []string{"reference (/ops/o1 != /ops/o2)", "header Location"},
		},
		{
			name:     "current: a replay showing the record as it is now",
			mode:     targets.ReplayCurrent,
			attempts: []history.Attempt{first, withRead(sent(2, 200, confirmed), "/things/t1", confirmed)},
			verdict:  reports.Pass,
		},
		{
			name:     "current: a replay of the stored first answer after the record changed",
			mode:     targets.ReplayCurrent,
			attempts: []history.Attempt{first, withRead(sent(2, 201, created), "/things/t1", confirmed)},
			verdict:  reports.Fail, want: []string{"replay-differs what=body seqs=1,2"},
			says: []string{"the resource's current representation (GET /things/t1 right after it", "at $['status']"},
		},
		{
			name:     "current: a replay naming another resource",
			mode:     targets.ReplayCurrent,
			attempts: []history.Attempt{first, withRead(sent(2, 200, `{"id":"t2"}`), "/things/t2", `{"id":"t2"}`)},
			verdict:  reports.Fail, want: []string{"replay-differs what=body seqs=1,2"},
			says: []string{"resource (/things/t1 != /things/t2)"},
		},
		{
			name: "current: a fresh read that failed is unknown",
			mode: targets.ReplayCurrent,
			attempts: []history.Attempt{first, func() history.Attempt {
				a := sent(2, 200, confirmed)
				a.Current = &history.Read{URL: "/things/t1", Err: "connection refused"}
				return a
			}()},
			verdict: reports.Unknown, says: []string{"the fresh read of /things/t1 failed: connection refused"},
		},
		{
			name:     "reference: a replay naming the first answer's operation, whatever its body",
			mode:     targets.ReplayReference,
			attempts: []history.Attempt{accepted(1, "/ops/o1"), func() history.Attempt { a := sent(2, 200, `{}`); a.Reference = "/ops/o1"; return a }()},
			verdict:  reports.Pass,
		},
		{
			name:     "reference: a replay without a reference",
			mode:     targets.ReplayReference,
			attempts: []history.Attempt{accepted(1, "/ops/o1"), sent(2, 202, `{}`)},
			verdict:  reports.Fail, want: []string{"replay-differs what=reference seqs=1,2"},
			says: []string{"reference (/ops/o1 != (none))", "operation reference of the first answer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, Replay(tt.attempts, records(1), profile(t, "", replayReturns(tt.mode))), tt.verdict, tt.want, tt.says...)
		})
	}
}

// settlement is a settlement of the test operation accepted at t0 whose reads found states.
func settlement(settle time.Duration, states ...string) Settlement {
	s := Settlement{Op: testOp, Tenant: testTenant, Key: testKey, Reference: "/ops/o1", Seqs: []int64{1}, Accepted: t0, Settle: settle,
		Phase: targets.PhasePending}
	for i, st := range states {
		ph := targets.PhasePending
		switch st {
		case "succeeded":
			ph = targets.PhaseDone
		case "failed":
			ph = targets.PhaseFailed
		}
		s.Polls = append(s.Polls, Poll{At: t0.Add(time.Duration(i+1) * 50 * time.Millisecond), Status: 200, State: st, Phase: ph})
		s.Phase = ph
	}
	return s
}

// An operation not done within its settle, or a 202 without a reference, is operation-not-settled;
// a done or failed one passes, and the pass says how long the slowest was pending.
func TestSettled(t *testing.T) {
	noRef := settlement(time.Second)
	noRef.NoReference, noRef.Reference = "async.reference (header Location) finds nothing in the answer", ""
	tests := []struct {
		name    string
		ss      []Settlement
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{"none", nil, reports.Pass, nil, nil},
		{"done at the third read", []Settlement{settlement(time.Second, "pending", "running", "succeeded")}, reports.Pass, nil,
			[]string{"1 asynchronous operations settled, the slowest still pending 100ms after its 202"}},
		{"failed", []Settlement{settlement(time.Second, "failed")}, reports.Pass, nil,
			[]string{"1 asynchronous operations settled, each done at its first read"}},
		{"still pending", []Settlement{settlement(200*time.Millisecond, "pending", "pending", "pending", "pending")}, reports.Fail,
			[]string{"operation-not-settled seqs=1"},
			[]string{"operation /ops/o1 was not done 200ms after its 202 (async.settle 200ms): 4 reads: pending at +50ms"}},
		{"no reference", []Settlement{noRef}, reports.Fail, []string{"operation-not-settled seqs=1"},
			[]string{"the 202 carries no operation reference to follow: async.reference (header Location) finds nothing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Settled(tt.ss)
			expect(t, res, tt.verdict, tt.want)
			text := res.Message() + strings.Join(res.Observed, "\n")
			for _, s := range tt.says {
				if !strings.Contains(text, s) {
					t.Errorf("result %q lacks %q", text, s)
				}
			}
		})
	}
	if got := PollStates(settlement(time.Second, "a", "b", "c", "d", "e", "f"), 4); got != "6 reads: a at +50ms, b at +100ms, (2 more), e at +250ms, f at +300ms" {
		t.Errorf("PollStates = %q", got)
	}
}

// The count of an operation that did not settle is not judged; one whose status resource said it
// failed is held against the target only for a duplicate.
func TestCountsOfAsyncOperations(t *testing.T) {
	first := accepted(1, "/ops/o1")
	unsettled, failed := records(0), records(0)
	unsettled.Unsettled, failed.Failed = true, true
	failedTwice := records(2)
	failedTwice.Failed = true
	expect(t, Replay([]history.Attempt{first}, unsettled, profile(t, "")), reports.Pass, nil)
	expect(t, Replay([]history.Attempt{first}, failed, profile(t, "")), reports.Pass, nil)
	expect(t, Replay([]history.Attempt{first}, failedTwice, profile(t, "")), reports.Fail, []string{"duplicate-record seqs=1"})
	expect(t, Replay([]history.Attempt{first}, records(0), profile(t, "")), reports.Fail, []string{"missing-record seqs=1"})
}

// Under in_flight: status-resource a 202 in a burst is the in-flight answer, not a second success.
func TestRaceStatusResource(t *testing.T) {
	const body = `{"id":"t1"}`
	burst := []history.Attempt{sent(1, 201, body), accepted(2, "/ops/o1"), accepted(3, "/ops/o1")}
	expect(t, RaceRound(burst, sent(4, 201, body), records(1), profile(t, "", statusResource)), reports.Pass, nil)
	// Without it, the 202s are other successes than the 201.
	expect(t, RaceRound(burst, sent(4, 201, body), records(1), profile(t, "")), reports.Fail, []string{"replay-differs what=status seqs=1,2"})
	// A success after the burst is what a status-resource API answers once done; a 202 then is not.
	expect(t, Replay([]history.Attempt{accepted(1, "/ops/o1")}, records(1), profile(t, "", statusResource)), reports.Fail,
		[]string{"wrong-status seqs=1"}, "a 2xx other than the in-flight answer 202 (in_flight: status-resource)")
}

// A first attempt answered 202 before the kill is an accepted operation: the retries must name it.
func TestCrashAfterClaimAccepted(t *testing.T) {
	c := CrashClaim{First: accepted(1, "/ops/o1"), Final: Eventually{Attempts: []history.Attempt{accepted(2, "/ops/o1")}, Within: time.Second},
		After: accepted(3, "/ops/o1"), Records: records(1), Downstream: Downstream{Taken: true, Calls: 2, Effects: 1, Keys: []string{"d1"}}}
	expect(t, CrashAfterClaim(c, profile(t, "")), reports.Pass, nil)
	c.Final.Attempts = []history.Attempt{accepted(2, "/ops/o2")}
	c.After = accepted(3, "/ops/o2")
	expect(t, CrashAfterClaim(c, profile(t, "")), reports.Fail, []string{"replay-differs what=reference seqs=1,2"}, "the retry after the restart differs")
}

// Under load, a non-original replay_returns does not compare a later 2xx's bytes with the first's.
func TestLoadReplayReturns(t *testing.T) {
	atts := []history.Attempt{answer(1, "k1", 201, `{"id":"a","status":"created"}`, 0, 5), answer(2, "k1", 200, `{"id":"a","status":"confirmed"}`, 10, 5)}
	seq := func(yield func(history.Attempt) bool) {
		for _, a := range atts {
			if !yield(a) {
				return
			}
		}
	}
	if got := kinds(Load(seq, map[string]int{"k1": 1}, loadProfile(t), 0).Anomalies); len(got) != 1 || !strings.HasPrefix(got[0], "replay-differs") {
		t.Errorf("original: %v, want a replay-differs", got)
	}
	p := loadProfile(t)
	p.ReplayReturns = targets.ReplayCurrent
	if got := kinds(Load(seq, map[string]int{"k1": 1}, p, 0).Anomalies); len(got) != 0 {
		t.Errorf("current: %v, want none", got)
	}
}
