package check

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// of is an attempt of the operation with the given key, started at t0 plus at, taking 10ms
// (status 0: no answer, then it took a second).
func of(key string, seq int64, status int, at time.Duration) history.Attempt {
	a := sent(seq, status, `{"id":"`+key+`"}`)
	if status == 0 {
		a = noAnswer(seq)
		a.End = t0.Add(at + time.Second)
	} else {
		a.End = t0.Add(at + 10*time.Millisecond)
	}
	a.Key, a.Start = key, t0.Add(at)
	return a
}

// counts are taken counts by key.
func counts(n map[string]int) map[string]Count {
	out := map[string]Count{}
	for k, v := range n {
		c := records(v)
		c.Key, c.Ref = k, "ref-"+k
		out[k] = c
	}
	return out
}

// kill is a kill of an instance that took effect at t0 plus at.
func kill(at time.Duration, instance string) history.Event {
	return history.Event{At: t0.Add(at), Action: "inject", Kind: "kill", Target: instance, Fault: "kill " + instance}
}

func TestCrashUnderLoad(t *testing.T) {
	const ms = time.Millisecond
	healthy := []history.Attempt{
		of("a", 1, 201, 0),
		of("b", 2, 0, 0), of("b", 3, 409, 2*time.Second), of("b", 4, 201, 3*time.Second),
		of("c", 5, 422, 0),
	}
	tests := []struct {
		name      string
		change    func(*targets.Profile)
		attempts  []history.Attempt
		counts    map[string]Count
		events    []history.Event
		retention time.Duration
		checkedAt time.Duration
		verdict   reports.Verdict
		want      []string // "kind key seqs"
		says      []string
	}{
		{
			name:     "every acknowledged operation has one record; a rejected one none",
			attempts: healthy, counts: counts(map[string]int{"a": 1, "b": 1, "c": 0}),
			events:  []history.Event{kill(5*ms, "instance 0")},
			verdict: reports.Pass,
		},
		{
			name:     "an operation executed twice across a kill",
			attempts: []history.Attempt{of("a", 1, 0, 0), of("a", 2, 201, 2*time.Second)},
			counts:   counts(map[string]int{"a": 2}),
			events: []history.Event{
				{At: t0.Add(500 * ms), Action: "inject", Kind: "kill", Target: "instance 1", Err: "no such process"},
				{At: t0.Add(600 * ms), Action: "inject", Kind: "pause", Target: "instance 0"},
				kill(700*ms, "instance 2"), {At: t0.Add(800 * ms), Action: "heal", Kind: "kill", Target: "instance 2"},
				kill(10*time.Second, "instance 0"),
			},
			verdict: reports.Fail, want: []string{"duplicate-record a 1,2"},
			says: []string{"2 business records for one operation (acknowledged with 201); in flight at kill 1 (instance 2)"},
		},
		{
			name:     "executed twice, never acknowledged",
			attempts: []history.Attempt{of("a", 1, 0, 0), of("a", 2, 503, time.Second)},
			counts:   counts(map[string]int{"a": 2}),
			verdict:  reports.Fail, want: []string{"duplicate-record a 1,2"},
			says: []string{"2 business records for one operation (never acknowledged)"},
		},
		{
			name:     "an acknowledged write lost in a crash",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("b", 2, 201, 0)},
			counts:   counts(map[string]int{"a": 0, "b": 1}),
			events:   []history.Event{kill(5*ms, "instance 0"), kill(3*time.Second, "instance 1")},
			verdict:  reports.Fail, want: []string{"lost-acknowledged-write a 1"},
			says: []string{"acknowledged with 201 but no business record after the crashes; in flight at kill 1 (instance 0)"},
		},
		{
			name:     "a key still in flight after the completion",
			attempts: []history.Attempt{of("a", 1, 0, 0), of("a", 2, 409, time.Second), of("a", 3, 409, 40*time.Second)},
			counts:   counts(map[string]int{"a": 0}),
			verdict:  reports.Fail, want: []string{"stuck-key a 1,3"},
			says: []string{"still answered 409 (in flight) 30s after the load: the key is stuck"},
		},
		{
			name:     "a key without an answer at the end is unknown",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("b", 2, 409, 0), of("b", 3, 0, time.Second)},
			counts:   counts(map[string]int{"a": 1, "b": 0}),
			verdict:  reports.Unknown, says: []string{"key b got no answer after the load: timeout"},
		},
		{
			name:     "a key rate limited or rejected at the end, never acknowledged, no record",
			attempts: []history.Attempt{of("a", 1, 429, 0), of("b", 2, 400, 0)},
			counts:   counts(map[string]int{"a": 0, "b": 0}),
			verdict:  reports.Pass,
		},
		{
			name:     "retried after the declared retention: a second record is a new request",
			attempts: []history.Attempt{of("a", 1, 0, 0), of("a", 2, 201, 2*time.Hour)},
			counts:   counts(map[string]int{"a": 2}), retention: time.Hour, checkedAt: 3 * time.Hour,
			verdict: reports.Pass,
		},
		{
			name:     "an unanswered attempt may have been processed after the retention (within its lock timeout)",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("a", 2, 0, time.Hour-10*time.Second)},
			counts:   counts(map[string]int{"a": 2}), retention: time.Hour, checkedAt: 2 * time.Hour,
			verdict: reports.Pass,
		},
		{
			name:     "an unanswered attempt long before the retention was not processed after it",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("a", 2, 0, time.Second)},
			counts:   counts(map[string]int{"a": 2}), retention: time.Hour, checkedAt: 2 * time.Hour,
			verdict: reports.Fail, want: []string{"duplicate-record a 1,2"},
		},
		{
			name: "an attempt that was never sent is not a retry after the retention",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("a", 2, 201, time.Second),
				{Seq: 3, Op: testOp, Tenant: testTenant, Key: "a", Outcome: history.Failed, Err: "dial tcp: connection refused",
					Start: t0.Add(2 * time.Hour), End: t0.Add(2 * time.Hour)}},
			counts: counts(map[string]int{"a": 2}), retention: time.Hour, checkedAt: 3 * time.Hour,
			verdict: reports.Fail, want: []string{"duplicate-record a 1,3"},
		},
		{
			name:     "counted after the retention, but every attempt answered within it",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("a", 2, 201, time.Second)},
			counts:   counts(map[string]int{"a": 2}), retention: time.Hour, checkedAt: 2 * time.Hour,
			verdict: reports.Fail, want: []string{"duplicate-record a 1,2"},
		},
		{
			name:     "retried after the retention under expired: reject",
			change:   func(p *targets.Profile) { p.Expired, p.ExpiredStatus = targets.ExpiredReject, targets.Status(410) },
			attempts: []history.Attempt{of("a", 1, 0, 0), of("a", 2, 201, 2*time.Hour)},
			counts:   counts(map[string]int{"a": 2}), retention: time.Hour, checkedAt: 3 * time.Hour,
			verdict: reports.Fail, want: []string{"duplicate-record a 1,2"},
		},
		{
			name:     "no declared retention",
			attempts: []history.Attempt{of("a", 1, 0, 0), of("a", 2, 201, 2*time.Hour)},
			counts:   counts(map[string]int{"a": 2}), checkedAt: 3 * time.Hour,
			verdict: reports.Fail, want: []string{"duplicate-record a 1,2"},
		},
		{
			name:     "the observer failed for one key",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("b", 2, 201, 0)},
			counts:   map[string]Count{"a": countFailed(), "b": records(1)},
			verdict:  reports.Unknown, says: []string{"the observer could not count the records of orders ref r1 (tenant alice): connection refused"},
		},
		{
			name:     "keys not counted are not checked for records",
			attempts: []history.Attempt{of("a", 1, 201, 0), of("b", 2, 201, 0)},
			counts:   map[string]Count{"a": notCounted},
			verdict:  reports.Pass,
		},
		{
			name:    "an empty history",
			verdict: reports.Pass,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile(t, "ietf", tt.change)
			res := CrashUnderLoad(CrashLoad{
				Attempts: slices.Values(tt.attempts), Counts: tt.counts, Events: tt.events,
				LockTimeout: 30 * time.Second, Retention: tt.retention, CheckedAt: t0.Add(tt.checkedAt),
			}, p)
			var got []string
			for _, a := range res.Anomalies {
				got = append(got, string(a.Kind)+" "+a.Key+" "+seqList(a.Seqs))
				if a.Op != testOp || a.Tenant != testTenant {
					t.Errorf("anomaly %s names op %q tenant %q, want %s, %s", a.Kind, a.Op, a.Tenant, testOp, testTenant)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("anomalies = %q, want %q\n%s", got, tt.want, res.Message())
			}
			if v := res.Verdict(); v != tt.verdict {
				t.Errorf("verdict = %s, want %s\n%s", v, tt.verdict, res.Message())
			}
			for _, s := range tt.says {
				if !strings.Contains(res.Message(), s) {
					t.Errorf("message does not say %q:\n%s", s, res.Message())
				}
			}
			if tt.verdict != reports.Pass {
				expectProse(t, res.Message())
			}
		})
	}
}

func TestKillsHitting(t *testing.T) {
	kills := []history.Event{kill(time.Second, "instance 0"), kill(5*time.Second, "instance 1"), kill(9*time.Second, "instance 0")}
	tests := []struct {
		name  string
		spans []history.Attempt
		want  string
	}{
		{"none", []history.Attempt{of("a", 1, 201, 2*time.Second)}, ""},
		{"at the start", []history.Attempt{of("a", 1, 201, time.Second)}, "; in flight at kill 1 (instance 0)"},
		{"two attempts, two kills", []history.Attempt{of("a", 1, 0, 4500*time.Millisecond), of("a", 2, 0, 8500*time.Millisecond)},
			"; in flight at kill 2 (instance 1), kill 3 (instance 0)"},
		{"one kill, two attempts", []history.Attempt{of("a", 1, 0, 500*time.Millisecond), of("a", 2, 0, 800*time.Millisecond)},
			"; in flight at kill 1 (instance 0)"},
	}
	for _, tt := range tests {
		if got := killsHitting(kills, tt.spans); got != tt.want {
			t.Errorf("%s: killsHitting = %q, want %q", tt.name, got, tt.want)
		}
	}
}
