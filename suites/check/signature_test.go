package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
)

func TestSignatureForged(t *testing.T) {
	const unsigned = "an unsigned delivery"
	ok := Forgery{What: unsigned, Delivery: delivery(1, 401), Effects: effects(0), Valid: delivery(2, 200), ValidEffects: effects(1)}
	with := func(change func(*Forgery)) Forgery {
		f := ok
		change(&f)
		return f
	}
	tests := []struct {
		name    string
		f       Forgery
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"rejected, then the valid delivery takes effect", ok, reports.Pass, nil, ""},
		{"rejected with 400", with(func(f *Forgery) { f.Delivery = delivery(1, 400) }), reports.Pass, nil, ""},
		{"accepted", with(func(f *Forgery) { f.Delivery, f.Effects = delivery(1, 200), effects(1) }),
			reports.Fail, []string{"forged-event-accepted seqs=1"}, "an unsigned delivery was accepted with 200 (effects: 1)"},
		{"rejected but applied", with(func(f *Forgery) { f.Effects = effects(1) }),
			reports.Fail, []string{"forged-event-accepted seqs=1"}, "was answered 401 but took effect"},
		{"near miss: rejected with a 5xx, no effect", with(func(f *Forgery) { f.Delivery = delivery(1, 503) }),
			reports.Fail, []string{"server-error seqs=1"}, "expected a 4xx rejection for an unsigned delivery, got 503"},
		{"a redirect", with(func(f *Forgery) { f.Delivery = delivery(1, 302) }), reports.Fail, []string{"wrong-status seqs=1"}, "got 302"},
		{"the rejected forgery used up the event id", with(func(f *Forgery) { f.ValidEffects = effects(0) }),
			reports.Fail, []string{"dropped-event seqs=1,2"}, "the rejected forgery used up the event id"},
		{"the valid delivery refused", with(func(f *Forgery) { f.Valid, f.ValidEffects = delivery(2, 401), effects(0) }),
			reports.Fail, []string{"wrong-status seqs=2"}, "expected a 2xx acknowledgement"},
		{"accepted, then the valid delivery a duplicate", with(func(f *Forgery) { f.Delivery, f.Effects = delivery(1, 202), effects(1) }),
			reports.Fail, []string{"forged-event-accepted seqs=1"}, ""},
		{"the forgery got no answer", with(func(f *Forgery) { f.Delivery = lostDelivery(1) }), reports.Unknown, nil, "got no answer"},
		{"no valid delivery after it", with(func(f *Forgery) { f.Valid = delivery(0, 0); f.Valid.Outcome = "" }), reports.Pass, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, SignatureForged(tt.f), tt.verdict, tt.want, tt.says)
		})
	}
}

func TestSignatureValid(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		effects Count
		verdict reports.Verdict
		want    []string
	}{
		{"accepted once", 200, effects(1), reports.Pass, nil},
		{"rejected", 401, effects(0), reports.Fail, []string{"wrong-status seqs=1"}},
		{"accepted, never applied", 200, effects(0), reports.Fail, []string{"dropped-event seqs=1"}},
		{"accepted twice over", 200, effects(2), reports.Fail, []string{"duplicate-record seqs=1"}},
		{"a 5xx", 500, effects(0), reports.Fail, []string{"server-error seqs=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, SignatureValid(delivery(1, tt.status), tt.effects), tt.verdict, tt.want)
		})
	}
}
