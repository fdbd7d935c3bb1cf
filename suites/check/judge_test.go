package check

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The hand-written histories of these tests are about one operation: op orders, key k-1,
// tenant alice, ref r1.
const (
	testOp     = "orders"
	testKey    = "k-1"
	testTenant = "alice"
)

// profile returns a base profile ("ietf", "stripe"; "" is "ietf") with the changes given (nil
// ones skipped).
func profile(t *testing.T, base string, change ...func(*targets.Profile)) targets.Profile {
	t.Helper()
	if base == "" {
		base = "ietf"
	}
	p, ok := targets.Profiles(base)
	if !ok {
		t.Fatalf("no %s profile", base)
	}
	for _, c := range change {
		if c != nil {
			c(&p)
		}
	}
	return p
}

// sent is an answered attempt of the test operation, with headers as name, value pairs. The
// attempt starts seq seconds after t0 and takes 10ms.
func sent(seq int64, status int, body string, header ...string) history.Attempt {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Add(header[i], header[i+1])
	}
	start := t0.Add(time.Duration(seq) * time.Second)
	return history.Attempt{
		Seq: seq, Op: testOp, Key: testKey, Tenant: testTenant, Status: status,
		RespHeader: h, RespBody: []byte(body), BodyHash: sha256.Sum256([]byte(body)), Outcome: history.OK,
		Start: start, End: start.Add(10 * time.Millisecond),
	}
}

// noAnswer is an attempt of the test operation that timed out.
func noAnswer(seq int64) history.Attempt {
	start := t0.Add(time.Duration(seq) * time.Second)
	return history.Attempt{Seq: seq, Op: testOp, Key: testKey, Tenant: testTenant, Outcome: history.Unknown,
		Err: "timeout awaiting response headers", Start: start, End: start.Add(time.Second)}
}

// records is a taken count of the test operation's records.
func records(n int) Count {
	return Count{Op: testOp, Tenant: testTenant, Ref: "r1", Key: testKey, N: n, Taken: true}
}

// countFailed is a count the observer could not take.
func countFailed() Count {
	return Count{Op: testOp, Tenant: testTenant, Ref: "r1", Key: testKey, Err: "connection refused", Taken: true}
}

// notCounted is the count of an operation without an observer.
var notCounted = Count{}

// summary renders an anomaly's kind and the fields a test pins, e.g. "replay-differs what=body
// seqs=1,2".
func summary(a reports.Anomaly) string {
	s := string(a.Kind)
	if a.What != "" {
		s += " what=" + a.What
	}
	if a.Field != "" {
		s += " field=" + a.Field
	}
	if a.Hop != "" {
		s += " hop=" + a.Hop
	}
	if len(a.Seqs) > 0 {
		s += " seqs=" + seqList(a.Seqs)
	}
	return s
}

// seqList renders attempt numbers as "1,2".
func seqList(seqs []int64) string {
	parts := make([]string, len(seqs))
	for i, q := range seqs {
		parts[i] = fmt.Sprint(q)
	}
	return strings.Join(parts, ",")
}

// notProse are fragments that betray Go or Gomega in a message meant for people.
var notProse = []string{"%!", "<nil>", "map[", "&{", "{}", "[]", "0x", "Expected", "to equal", "To(", "history.",
	"targets.", "check.", "Attempt{", "\t"}

// expect checks a result: its verdict, its anomalies (as summaries, in order, each about the test
// operation unless it names another) and that its message holds the fragments in says and reads
// as sentences.
func expect(t *testing.T, res Result, verdict reports.Verdict, want []string, says ...string) {
	t.Helper()
	var got []string
	for _, a := range res.Anomalies {
		got = append(got, summary(a))
		if a.Op == "" || a.Key == "" {
			t.Errorf("anomaly %s does not name its operation and key (op %q, key %q)", a.Kind, a.Op, a.Key)
		}
		if !a.Kind.Valid() {
			t.Errorf("anomaly kind %q is not one of reports.Kinds", a.Kind)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("anomalies = %q, want %q\n%s", got, want, res.Message())
	}
	if v := res.Verdict(); v != verdict {
		t.Errorf("verdict = %s, want %s\n%s", v, verdict, res.Message())
	}
	msg := res.Message()
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("message does not say %q:\n%s", s, msg)
		}
	}
	if verdict != reports.Pass {
		expectProse(t, msg)
	}
}

// expectProse checks that a message is sentences about the API: not empty, no Go syntax.
func expectProse(t *testing.T, msg string) {
	t.Helper()
	if strings.TrimSpace(msg) == "" {
		t.Errorf("empty message")
	}
	for _, line := range strings.Split(msg, "\n") {
		for _, bad := range notProse {
			if strings.Contains(line, bad) {
				t.Errorf("message line %q contains %q: not a sentence about the API", line, bad)
			}
		}
	}
}

func TestAnswered(t *testing.T) {
	never := history.Attempt{}
	failed := history.Attempt{Seq: 4, Outcome: history.Failed, Err: "dial tcp: connection refused"}
	tests := []struct {
		name    string
		a       history.Attempt
		want    bool
		unknown string
	}{
		{"answered", sent(1, 500, `{}`), true, ""},
		{"never sent", never, false, "the request was not sent"},
		{"no answer", noAnswer(3), false, "the request (attempt #3) got no answer: timeout awaiting response headers"},
		{"could not be sent", failed, false, "the request (attempt #4) could not be sent: dial tcp: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(profile(t, "ietf"))
			if got := j.answered(tt.a, "the request"); got != tt.want {
				t.Errorf("answered = %v, want %v", got, tt.want)
			}
			res := j.result()
			if len(res.Anomalies) > 0 {
				t.Errorf("an attempt without an answer is never an anomaly: %s", res.Message())
			}
			if got := strings.Join(res.Unknown, "\n"); got != tt.unknown {
				t.Errorf("unknown = %q, want %q", got, tt.unknown)
			}
		})
	}
}

func TestStatusSteps(t *testing.T) {
	tests := []struct {
		name   string
		step   func(*judge) bool
		ok     bool
		want   []string
		saying string
	}{
		{"2xx", func(j *judge) bool { return j.success(sent(1, 201, ``), "the send") }, true, nil, ""},
		{"4xx where a 2xx is wanted", func(j *judge) bool { return j.success(sent(1, 404, ``), "the send") }, false,
			[]string{"wrong-status seqs=1"}, "expected a 2xx for the send, got 404"},
		{"5xx where a 2xx is wanted", func(j *judge) bool { return j.success(sent(1, 502, ``), "the send") }, false,
			[]string{"server-error seqs=1"}, "expected a 2xx for the send, got 502"},
		{"in the set", func(j *judge) bool { return j.status(sent(1, 409, ``), targets.StatusSet{Classes: []int{4}}, "x") }, true, nil, ""},
		{"not in the set", func(j *judge) bool {
			return j.status(sent(1, 409, ``), targets.StatusSet{Codes: []int{400, 422}}, "the mismatch")
		}, false, []string{"wrong-status seqs=1"}, "expected one of 400, 422 for the mismatch, got 409"},
		{"no answer", func(j *judge) bool { return j.status(noAnswer(1), targets.Status(400), "x") }, false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(profile(t, "ietf"))
			if got := tt.step(j); got != tt.ok {
				t.Errorf("step = %v, want %v", got, tt.ok)
			}
			verdict := reports.Pass
			switch {
			case tt.want != nil:
				verdict = reports.Fail
			case !tt.ok:
				verdict = reports.Unknown
			}
			expect(t, j.result(), verdict, tt.want, tt.saying)
		})
	}
}

func TestDiffPart(t *testing.T) {
	tests := []struct {
		diffs []string
		want  string
	}{
		{[]string{"$['id']"}, "body"},
		{[]string{"body"}, "body"},
		{[]string{"header Location"}, "header"},
		{[]string{"header Location", "header X-A"}, "header"},
		{[]string{"header Location", "$['id']"}, "body"},
		{[]string{"header Location", "status (201 != 200)", "$['id']"}, "status"},
		{[]string{"status (201 != 409)"}, "status"},
	}
	for _, tt := range tests {
		if got := diffPart(tt.diffs); got != tt.want {
			t.Errorf("diffPart(%q) = %q, want %q", tt.diffs, got, tt.want)
		}
	}
}

func TestSame(t *testing.T) {
	first := sent(1, 201, `{"id":"o1"}`, "Date", "Mon, 01 Jan 2026 00:00:00 GMT", "Location", "/o/1")
	tests := []struct {
		name  string
		again history.Attempt
		want  []string
		says  string
	}{
		{"only volatile and transport headers differ", sent(2, 201, `{ "id": "o1" }`, "Date", "Mon, 01 Jan 2026 00:00:09 GMT",
			"Location", "/o/1", "X-Request-Id", "req-2", "Content-Length", "12", "Idempotency-Replayed", "true"), nil, ""},
		{"status", sent(2, 200, `{"id":"o1"}`, "Location", "/o/1"), []string{"replay-differs what=status seqs=1,2"},
			"the retry differs from the first answer (#1) at status (201 != 200)"},
		{"header", sent(2, 201, `{"id":"o1"}`, "Location", "/o/2"), []string{"replay-differs what=header seqs=1,2"},
			"at header Location"},
		{"body", sent(2, 201, `{"id":"o2"}`, "Location", "/o/1"), []string{"replay-differs what=body seqs=1,2"}, "at $['id']"},
		{"header and body", sent(2, 201, `{"id":"o2"}`), []string{"replay-differs what=body seqs=1,2"}, "at header Location, $['id']"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(profile(t, "ietf"))
			if got, want := j.same(first, tt.again, "the retry"), tt.want == nil; got != want {
				t.Errorf("same = %v, want %v", got, want)
			}
			verdict := reports.Pass
			if tt.want != nil {
				verdict = reports.Fail
			}
			expect(t, j.result(), verdict, tt.want, tt.says)
		})
	}
}

func TestReplayHeader(t *testing.T) {
	tests := []struct {
		name   string
		header targets.ReplayHeader
		a      history.Attempt
		want   []string
		says   string
	}{
		{"none required", targets.ReplayHeader{}, sent(2, 201, ``), nil, ""},
		{"present with the value", targets.ReplayHeader{Name: "Idempotent-Replayed", Value: "true"},
			sent(2, 201, ``, "Idempotent-Replayed", "true"), nil, ""},
		{"name in another case", targets.ReplayHeader{Name: "idempotent-replayed", Value: "true"},
			sent(2, 201, ``, "Idempotent-Replayed", "true"), nil, ""},
		{"any value", targets.ReplayHeader{Name: "X-Cache"}, sent(2, 201, ``, "X-Cache", "HIT"), nil, ""},
		{"missing", targets.ReplayHeader{Name: "Idempotent-Replayed", Value: "true"}, sent(2, 201, ``),
			[]string{"replay-differs what=header seqs=2"}, "the replay lacks the replay header Idempotent-Replayed"},
		{"another value", targets.ReplayHeader{Name: "Idempotent-Replayed", Value: "true"}, sent(2, 201, ``, "Idempotent-Replayed", "false"),
			[]string{"replay-differs what=header seqs=2"}, `the replay carries Idempotent-Replayed: false, want "true"`},
		{"no answer is not checked", targets.ReplayHeader{Name: "Idempotent-Replayed"}, noAnswer(2), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(profile(t, "ietf", func(p *targets.Profile) { p.ReplayHeader = tt.header }))
			j.replayHeader(tt.a, "the replay")
			verdict := reports.Pass
			if tt.want != nil {
				verdict = reports.Fail
			}
			expect(t, j.result(), verdict, tt.want, tt.says)
		})
	}
}

func TestRecordSteps(t *testing.T) {
	tests := []struct {
		name    string
		step    func(*judge)
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"as many as acknowledged", func(j *judge) { j.records(records(1), 1, 7) }, reports.Pass, nil, ""},
		{"one more", func(j *judge) { j.records(records(2), 1, 7) }, reports.Fail, []string{"duplicate-record seqs=7"},
			"2 business records for orders ref r1 (tenant alice), want 1: it was executed more than once"},
		{"one fewer", func(j *judge) { j.records(records(1), 2, 7, 8) }, reports.Fail, []string{"missing-record seqs=7,8"},
			"1 business records for orders ref r1 (tenant alice), want 2"},
		{"not taken", func(j *judge) { j.records(notCounted, 1) }, reports.Pass, nil, ""},
		{"observer failed", func(j *judge) { j.records(countFailed(), 1) }, reports.Unknown, nil,
			"the observer could not count the records of orders ref r1 (tenant alice): connection refused"},
		{"at most: fewer is fine", func(j *judge) { j.notMore(records(0), 1) }, reports.Pass, nil, ""},
		{"at most: more is a duplicate", func(j *judge) { j.notMore(records(2), 1, 3) }, reports.Fail,
			[]string{"duplicate-record seqs=3"}, "2 business records"},
		{"at most: observer failed", func(j *judge) { j.notMore(countFailed(), 1) }, reports.Unknown, nil, "connection refused"},
		{"rejected, no record", func(j *judge) { j.noRecord(records(0), "the empty key", 3) }, reports.Pass, nil, ""},
		{"rejected, recorded", func(j *judge) { j.noRecord(records(1), "the empty key", 3) }, reports.Fail,
			[]string{"rejected-but-recorded seqs=3"}, "the empty key left 1 business records for orders ref r1 (tenant alice)"},
		{"rejected, observer failed", func(j *judge) { j.noRecord(countFailed(), "the empty key", 3) }, reports.Unknown, nil, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(profile(t, "ietf"))
			tt.step(j)
			expect(t, j.result(), tt.verdict, tt.want, tt.says)
		})
	}
}

func TestCountSubject(t *testing.T) {
	tests := []struct {
		c    Count
		want string
	}{
		{Count{Op: "orders", Ref: "r1", Tenant: "alice"}, "orders ref r1 (tenant alice)"},
		{Count{Op: "orders", Ref: "r1", Tenant: "-"}, "orders ref r1"},
		{Count{Op: "orders"}, "orders"},
		{Count{Ref: "r1"}, "ref r1"},
	}
	for _, tt := range tests {
		if got := tt.c.subject(); got != tt.want {
			t.Errorf("subject of %+v = %q, want %q", tt.c, got, tt.want)
		}
	}
	if c := Counted(3); c.N != 3 || !c.Taken || c.Err != "" {
		t.Errorf("Counted(3) = %+v, want a taken count of 3", c)
	}
}

func TestCompletes(t *testing.T) {
	done := sent(9, 201, `{"id":"o1"}`)
	tests := []struct {
		name     string
		p        func(*targets.Profile)
		attempts []history.Attempt
		ok       bool
		final    int64 // the attempt returned
		verdict  reports.Verdict
		want     []string
		says     string
	}{
		{"at once", nil, []history.Attempt{done}, true, 9, reports.Pass, nil, ""},
		{"after the in-flight status and lost answers", nil, []history.Attempt{noAnswer(2), sent(3, 409, ``), done}, true, 9, reports.Pass, nil, ""},
		{"429 during completion is tolerated", nil, []history.Attempt{sent(2, 429, ``), sent(3, 409, ``), done}, true, 9, reports.Pass, nil, ""},
		{"not retried", nil, nil, false, 0, reports.Unknown, nil, "the retry was not retried"},
		{"stuck", nil, []history.Attempt{sent(2, 409, ``), sent(3, 409, ``)}, false, 3, reports.Fail,
			[]string{"stuck-key seqs=2,3"}, "the retry still answered 409 (in flight) 1m0s later: the key is stuck"},
		{"stuck on a 429 in-flight status", func(p *targets.Profile) { p.InFlightStatus = targets.Status(429) },
			[]history.Attempt{sent(2, 429, ``)}, false, 2, reports.Fail, []string{"stuck-key seqs=2,2"}, "still answered 429 (in flight)"},
		{"rate limited to the end is not stuck", nil, []history.Attempt{sent(2, 409, ``), sent(3, 429, ``)}, false, 3, reports.Unknown, nil,
			"the retry was still rate limited (429) 1m0s later"},
		{"never answered", nil, []history.Attempt{sent(2, 409, ``), noAnswer(3)}, false, 3, reports.Unknown, nil,
			"the retry got no answer within 1m0s: timeout"},
		{"another status", nil, []history.Attempt{sent(2, 404, ``), done}, false, 2, reports.Fail, []string{"wrong-status seqs=2"},
			"expected the in-flight status or the final answer for the retry, got 404"},
		{"a 5xx", nil, []history.Attempt{sent(2, 503, ``), done}, false, 2, reports.Fail, []string{"server-error seqs=2"}, "got 503"},
		{"the in-flight status is not accepted under wait-replay", func(p *targets.Profile) { p.InFlight = targets.InFlightWaitReplay },
			[]history.Attempt{sent(2, 409, ``), done}, false, 2, reports.Fail, []string{"wrong-status seqs=2"},
			"expected the final answer (in_flight: wait-replay) for the retry, got 409"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(profile(t, "ietf", tt.p))
			final, ok := j.completes(Eventually{Attempts: tt.attempts, Within: time.Minute}, "the retry", succeeded)
			if ok != tt.ok || final.Seq != tt.final {
				t.Errorf("completes = #%d, %v; want #%d, %v", final.Seq, ok, tt.final, tt.ok)
			}
			expect(t, j.result(), tt.verdict, tt.want, tt.says)
		})
	}
}
