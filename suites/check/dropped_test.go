package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
)

func TestDroppedResponse(t *testing.T) {
	const created = `{"id":"o1"}`
	replayed := []string{"Idempotent-Replayed", "true"}
	ok := Dropped{
		Lost:  noAnswer(1),
		Retry: sent(2, 201, created, replayed...), Again: sent(3, 201, created, replayed...),
		Records: records(1), Downstream: sink(1, 1, 1),
	}
	with := func(change func(*Dropped)) Dropped {
		d := ok
		change(&d)
		return d
	}
	tests := []struct {
		name    string
		base    string
		d       Dropped
		verdict reports.Verdict
		want    []string
		says    []string
	}{
		{name: "the retry replays with the replay header (stripe)", base: "stripe", d: ok, verdict: reports.Pass},
		{name: "the retry replays (ietf: no replay header declared)", base: "ietf", d: with(func(d *Dropped) {
			d.Retry, d.Again = sent(2, 201, created), sent(3, 201, created, "Date", "Mon, 05 Jan 2026 10:00:09 GMT")
		}), verdict: reports.Pass},
		{name: "no downstream sink", base: "stripe", d: with(func(d *Dropped) { d.Downstream = Downstream{} }), verdict: reports.Pass},
		{name: "the retry lacks the replay header: executed anew (stripe)", base: "stripe", d: with(func(d *Dropped) { d.Retry = sent(2, 201, created) }),
			verdict: reports.Fail, want: []string{"replay-differs what=header seqs=2"},
			says: []string{"the retry after the lost response lacks the replay header Idempotent-Replayed"}},
		{name: "executed twice", base: "stripe", d: with(func(d *Dropped) { d.Records = records(2) }),
			verdict: reports.Fail, want: []string{"duplicate-record seqs=1,2"}},
		{name: "charged twice downstream", base: "stripe", d: with(func(d *Dropped) { d.Downstream = sink(2, 2, 2) }),
			verdict: reports.Fail, want: []string{"duplicate-downstream-effect seqs=1,2"}, says: []string{"performed 2 effects"}},
		{name: "two calls with one downstream key are one effect", base: "stripe", d: with(func(d *Dropped) { d.Downstream = sink(2, 1, 1) }),
			verdict: reports.Pass},
		{name: "the second retry differs", base: "stripe", d: with(func(d *Dropped) { d.Again = sent(3, 201, `{"id":"o2"}`, replayed...) }),
			verdict: reports.Fail, want: []string{"replay-differs what=body seqs=2,3"}, says: []string{"a second retry differs from the first answer (#2)"}},
		{name: "the retry failed", base: "stripe", d: with(func(d *Dropped) { d.Retry = sent(2, 500, `{}`) }),
			verdict: reports.Fail, want: []string{"server-error seqs=2"}, says: []string{"expected a 2xx for the retry after the lost response, got 500"}},
		{name: "the retry got the in-flight status", base: "stripe", d: with(func(d *Dropped) { d.Retry = sent(2, 409, `{}`) }),
			verdict: reports.Fail, want: []string{"wrong-status seqs=2"}},
		{name: "the retry got no answer", base: "stripe", d: with(func(d *Dropped) { d.Retry = noAnswer(2) }), verdict: reports.Unknown},
		{name: "the second retry got no answer", base: "stripe", d: with(func(d *Dropped) { d.Again = noAnswer(3) }), verdict: reports.Unknown},
		{name: "the fault did not cut the response", base: "stripe", d: with(func(d *Dropped) { d.Lost = sent(1, 201, created) }),
			verdict: reports.Unknown, says: []string{"the fault did not cut the response (attempt #1 got 201)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, DroppedResponse(tt.d, profile(t, tt.base)), tt.verdict, tt.want, tt.says...)
		})
	}
}
