package check

import (
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The events of these hand-written histories are order.created, tied to the test operation's
// ref r1 (or, by record, to ord_1), observed at a number of seconds after t0 (the test
// operation's attempt n starts n seconds after t0 and takes 10ms); within is 2s.

const within = 2 * time.Second

// evt is an event observed at seconds after t0, entry seq, with a body that names it.
func evt(seq int64, id, tie string, at float64) Event {
	return Event{Seq: seq, ID: id, Tie: tie, At: t0.Add(time.Duration(at * float64(time.Second))),
		Body: fmt.Appendf(nil, `{"id":%q,"data":{"ref":"r1","id":"ord_1"},"sent_at":"%v"}`, id, at)}
}

// eventBody is e with another body.
func eventBody(e Event, body string) Event {
	e.Body = []byte(body)
	return e
}

// seen observes events until seconds after t0, ignoring $.sent_at.
func seen(until float64, evs ...Event) Events {
	return Events{Name: "order.created", Seen: evs, Until: t0.Add(time.Duration(until * float64(time.Second))), Within: within,
		Ignore: ignoring(nil, "$.sent_at")}
}

// ignoring is an Ignore of JSONPaths, built as the target file does.
func ignoring(t *testing.T, paths ...string) targets.Ignore {
	src := "instances: [http://127.0.0.1:1]\noperations:\n  - name: o\n    path: /o\n    body: '{\"ref\": \"{{.Ref}}\"}'\n" +
		"    publishes:\n      - name: e\n        nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e}\n" +
		"        id: {jsonpath: $.id}\n        ref: {jsonpath: $.ref}\n        ignore: ["
	for i, p := range paths {
		if i > 0 {
			src += ", "
		}
		src += "'" + p + "'"
	}
	tg, err := targets.Parse("t.yaml", []byte(src+"]\n"), nil)
	if err != nil {
		panic(err)
	}
	return tg.Operations[0].Publishes[0].IgnoreSet()
}

// op is the test operation with its attempts, tied to its ref.
func op(atts ...history.Attempt) EventOp {
	return EventOp{Op: testOp, Tenant: testTenant, Key: testKey, Ref: "r1", Attempts: atts, Ties: []string{"r1"}, Records: records(1)}
}

// rejected is a request sent without a key and rejected, with ref r9.
func rejected(seq int64) EventOp {
	a := sent(seq, 400, `{"title":"Bad Request"}`)
	a.Key = ""
	return EventOp{Op: testOp, Tenant: testTenant, Key: testKey, Ref: "r9", Attempts: []history.Attempt{a}, Ties: []string{"r9"},
		Records: Count{Op: testOp, Ref: "r9", Taken: true}, Rejected: true}
}

func TestEventPerRecord(t *testing.T) {
	created := `{"id":"ord_1"}`
	acked := op(sent(1, 201, created), sent(2, 201, created), sent(3, 422, `{}`))
	tests := []struct {
		name    string
		ops     []EventOp
		ev      Events
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "one id, observed twice with another send time", ops: []EventOp{acked, rejected(4)},
			ev: seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_a", "r1", 2.5)), verdict: reports.Pass},
		{name: "a second id from a replay", ops: []EventOp{acked},
			ev: seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r1", 2.5)), verdict: reports.Fail,
			want: []string{"event-new-id seqs=1,10,11"}, says: []string{"published order.created under 2 ids (evt_a, evt_b)"}},
		{name: "no event once the harness looked long enough", ops: []EventOp{acked}, ev: seen(9), verdict: reports.Fail,
			want: []string{"missing-event seqs=1"}, says: []string{"published no event order.created within 2s"}},
		{name: "no event yet, the harness looked too briefly", ops: []EventOp{acked}, ev: seen(2.5), verdict: reports.Unknown,
			says: []string{"the harness looked only 1.49s after its 2xx (#1)"}},
		{name: "an event later than within", ops: []EventOp{acked}, ev: seen(9, evt(10, "evt_a", "r1", 5)), verdict: reports.Fail,
			want: []string{"missing-event seqs=1,10"}, says: []string{"came 3.99s after its 2xx (#1), not within 2s"}},
		{name: "the rejected request published", ops: []EventOp{acked, rejected(4)},
			ev: seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_r", "r9", 4.5)), verdict: reports.Fail,
			want: []string{"ghost-event seqs=11"}, says: []string{"r9 was rejected and published order.created evt_r"}},
		{name: "copies of one id that differ outside ignore", ops: []EventOp{acked},
			ev:      seen(9, evt(10, "evt_a", "r1", 1.5), eventBody(evt(11, "evt_a", "r1", 2), `{"id":"evt_a","data":{"ref":"r1","id":"ord_2"}}`)),
			verdict: reports.Fail, want: []string{"event-differs field=$['data']['id'] seqs=10,11"}},
		{name: "an event of another spec's operation", ops: []EventOp{acked},
			ev: seen(9, evt(9, "evt_x", "r0", 0.5), evt(10, "evt_a", "r1", 1.5)), verdict: reports.Pass},
		{name: "an event that cannot be read", ops: []EventOp{acked},
			ev: seen(9, Event{Seq: 9, At: t0, Err: "$.id selects nothing"}, evt(10, "evt_a", "r1", 1.5)), verdict: reports.Unknown,
			says: []string{"event order.created #9 could not be read: $.id selects nothing"}},
		{name: "never acknowledged, one event (it may have committed)", ops: []EventOp{op(noAnswer(1))},
			ev: seen(9, evt(10, "evt_a", "r1", 1.5)), verdict: reports.Pass},
		{name: "never acknowledged, two ids", ops: []EventOp{op(noAnswer(1))},
			ev: seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r1", 1.6)), verdict: reports.Fail,
			want: []string{"event-new-id seqs=10,11"}},
		{name: "failed without a record and published", ops: []EventOp{withRecords(op(sent(1, 500, `{}`)), 0)},
			ev: seen(9, evt(10, "evt_a", "r1", 1.5)), verdict: reports.Fail, want: []string{"ghost-event seqs=10"},
			says: []string{"left no record and published"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, EventPerRecord(tt.ops, tt.ev), tt.verdict, tt.want, tt.says...)
		})
	}
}

// withRecords is o counted with n records.
func withRecords(o EventOp, n int) EventOp {
	o.Records = records(n)
	return o
}

// Events tied by record: one that names a record no answer named is a ghost; one that names an
// earlier spec's record is left out.
func TestEventPerRecordByRecord(t *testing.T) {
	o := op(sent(1, 201, `{"id":"ord_1"}`))
	o.Ties = []string{"ord_1"}
	ev := seen(9, evt(10, "evt_a", "ord_1", 1.5), evt(11, "evt_g", "ord_9", 1.7), evt(12, "evt_o", "ord_0", 1.8))
	ev.ByRecord, ev.Others = true, []string{"ord_0"}
	res := EventPerRecord([]EventOp{o}, ev)
	if len(res.Anomalies) != 1 || res.Anomalies[0].Kind != reports.KindGhostEvent || res.Anomalies[0].Key != "evt_g" {
		t.Fatalf("anomalies %v, want one ghost-event for evt_g", res.Anomalies)
	}
	expectProse(t, res.Message())
	ev.Seen = ev.Seen[:1]
	expect(t, EventPerRecord([]EventOp{o}, ev), reports.Pass, nil)
}

func TestEventNotBeforeCommit(t *testing.T) {
	failed := sent(1, 503, `{"title":"Service Unavailable"}`)
	replayed := sent(2, 503, `{"title":"Service Unavailable"}`)
	retried := sent(2, 201, `{"id":"ord_1"}`)
	tests := []struct {
		name    string
		op      EventOp
		ev      Events
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "the error replayed, nothing published", op: op(failed, replayed), ev: seen(9), verdict: reports.Pass},
		{name: "the error replayed, an event published at the failure", op: op(failed, replayed),
			ev: seen(9, evt(10, "evt_g", "r1", 1.005)), verdict: reports.Fail, want: []string{"ghost-event seqs=1,10"},
			says: []string{"its first attempt failed (#1, 503)", "although no retry succeeded"}},
		{name: "retried to success, one event after the retry began", op: op(failed, retried),
			ev: seen(9, evt(10, "evt_a", "r1", 2.005)), verdict: reports.Pass},
		{name: "retried to success, a ghost before the retry and its event after", op: op(failed, retried),
			ev: seen(9, evt(10, "evt_g", "r1", 1.005), evt(11, "evt_a", "r1", 2.005)), verdict: reports.Fail,
			want: []string{"ghost-event seqs=1,10"}, says: []string{"before its retry #2 began"}},
		{name: "retried to success, no event", op: op(failed, retried), ev: seen(9), verdict: reports.Fail,
			want: []string{"missing-event seqs=2"}},
		{name: "retried to success, two ids", op: op(failed, retried),
			ev: seen(9, evt(10, "evt_a", "r1", 2.005), evt(11, "evt_b", "r1", 2.5)), verdict: reports.Fail,
			want: []string{"event-new-id seqs=2,10,11"}},
		{name: "a retry without an answer may have committed", op: op(failed, noAnswer(2)),
			ev: seen(9, evt(10, "evt_a", "r1", 2.5)), verdict: reports.Pass},
		{name: "the first attempt did not fail", op: op(retried), ev: seen(9, evt(10, "evt_a", "r1", 2.5)), verdict: reports.Unknown,
			says: []string{"did not fail (it got 201)"}},
		{name: "the first attempt got no answer", op: op(noAnswer(1), retried), ev: seen(9), verdict: reports.Unknown,
			says: []string{"the first attempt (attempt #1) got no answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, EventNotBeforeCommit(tt.op, tt.ev), tt.verdict, tt.want, tt.says...)
		})
	}
}

// Tied by record, the event of a failed attempt names a record no answer named: a ghost, whether
// or not a retry then succeeded; the retry's own event passes.
func TestEventNotBeforeCommitByRecord(t *testing.T) {
	failed := sent(1, 500, `{"title":"Internal Server Error"}`)
	o := op(failed, sent(2, 500, `{"title":"Internal Server Error"}`))
	o.Ties = nil // no 2xx: no record named
	ev := seen(9, evt(10, "evt_g", "ord_9", 1.005))
	ev.ByRecord = true
	res := EventNotBeforeCommit(o, ev)
	if len(res.Anomalies) != 1 || res.Anomalies[0].Kind != reports.KindGhostEvent || res.Anomalies[0].Key != "evt_g" {
		t.Fatalf("anomalies %v, want one ghost-event for evt_g", res.Anomalies)
	}
	ok := op(failed, sent(2, 201, `{"id":"ord_1"}`))
	ok.Ties = []string{"ord_1"}
	ev.Seen = []Event{evt(11, "evt_a", "ord_1", 2.005)}
	expect(t, EventNotBeforeCommit(ok, ev), reports.Pass, nil)
}
