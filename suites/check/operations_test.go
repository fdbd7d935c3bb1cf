package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// opEffects is a taken count of operation op's effects, keyed by the first event.
func opEffects(op string, n int) Count {
	return Count{Op: testConsumer, Ref: op, Key: "evt_1", N: n, Taken: true}
}

// msg is a message of one delivery.
func msg(a history.Attempt) Message { return Message{Delivery: a} }

func TestSameOperationNewMessage(t *testing.T) {
	first, second := msg(deliveryOf("evt_1", 1, 200)), msg(deliveryOf("evt_2", 2, 200))
	held := Message{Delivery: deliveryOf("evt_2", 2, 409), Again: redeliveries(deliveryOf("evt_2", 3, 200))}
	tests := []struct {
		name          string
		first, second Message
		effects       Count
		dedupe        bool
		verdict       reports.Verdict
		want          []string
		says          string
	}{
		{"applied once", first, second, opEffects("pay_1", 1), true, reports.Pass, nil, ""},
		{"applied twice: deduplicated on the message id", first, second, opEffects("pay_1", 2), true,
			reports.Fail, []string{"operation-applied-twice seqs=1,2"}, "deduplicates on the message id, not on the operation"},
		{"near miss: twice without the promise is skipped with the counts", first, second, opEffects("pay_1", 2), false,
			reports.Skipped, nil, "the consumer applied the operation 2 times: it dedupes on the message id"},
		{"once without the promise is skipped too", first, second, opEffects("pay_1", 1), false, reports.Skipped, nil, "it applied operation pay_1 once"},
		{"released together: held, then redelivered", first, held, opEffects("pay_1", 1), true, reports.Pass, nil, ""},
		{"released together, applied twice", first, held, opEffects("pay_1", 2), true,
			reports.Fail, []string{"operation-applied-twice seqs=1,2,3"}, "took effect 2 times"},
		{"never applied, both acknowledged", first, second, opEffects("pay_1", 0), true, reports.Fail, []string{"dropped-event seqs=1,2"}, "never took effect"},
		{"the second refused", first, msg(deliveryOf("evt_2", 2, 400)), opEffects("pay_1", 1), true,
			reports.Fail, []string{"wrong-status seqs=2"}, "expected a 2xx acknowledgement"},
		{"the in-flight answer never redelivered to an ack", first, Message{Delivery: deliveryOf("evt_2", 2, 409), Again: redeliveries(deliveryOf("evt_2", 3, 409))},
			opEffects("pay_1", 1), true, reports.Fail, []string{"stuck-key seqs=3,3"}, "the key is stuck"},
		{"no answer to the second", first, msg(lostDeliveryOf("evt_2", 2)), opEffects("pay_1", 1), true, reports.Unknown, nil, "got no answer"},
		{"published", msg(publication("evt_1", 1)), msg(publication("evt_2", 2)), opEffects("pay_1", 2), true,
			reports.Fail, []string{"operation-applied-twice seqs=1,2"}, ""},
		{"not counted", first, second, Count{Op: testConsumer, Ref: "pay_1", Key: "evt_1", Taken: true, Err: "refused"}, true, reports.Unknown, nil, "could not count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, SameOperationNewMessage(tt.first, tt.second, tt.effects, tt.dedupe), tt.verdict, tt.want, tt.says)
		})
	}
}

func TestOneMessageManyOperations(t *testing.T) {
	counts := func(ns ...int) []Count {
		out := make([]Count, len(ns))
		for i, n := range ns {
			out[i] = opEffects([]string{"item_1", "item_2", "item_3"}[i], n)
		}
		return out
	}
	base := ManyOperations{First: deliveryOf("evt_1", 1, 200), Again: deliveryOf("evt_1", 2, 200), Later: deliveryOf("evt_2", 3, 200),
		AfterFirst: counts(1, 1, 1), AfterAgain: counts(1, 1, 1), AfterLater: opEffects("item_2", 1)}
	with := func(f func(*ManyOperations)) ManyOperations {
		o := base
		f(&o)
		return o
	}
	tests := []struct {
		name    string
		o       ManyOperations
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"each once, none again", base, reports.Pass, nil, ""},
		{"the first only", with(func(o *ManyOperations) { o.AfterFirst, o.AfterAgain = counts(1, 0, 0), counts(1, 0, 0) }),
			reports.Fail, []string{"operation-not-applied seqs=1", "operation-not-applied seqs=1"}, "operation item_2 of event evt_1 took no effect"},
		{"the redelivery applied them again", with(func(o *ManyOperations) { o.AfterAgain = counts(2, 2, 2) }),
			reports.Fail, []string{"duplicate-record seqs=1,2", "duplicate-record seqs=1,2", "duplicate-record seqs=1,2"}, "applied operation item_1 again"},
		{"near miss: a redelivery applied what the first left", with(func(o *ManyOperations) { o.AfterFirst = counts(1, 0, 1) }),
			reports.Fail, []string{"operation-not-applied seqs=1"}, ""},
		{"the later message applied one again", with(func(o *ManyOperations) { o.AfterLater = opEffects("item_2", 2) }),
			reports.Fail, []string{"operation-applied-twice seqs=1,3"}, "event evt_2 named it again"},
		{"no later message without the promise", with(func(o *ManyOperations) { o.Later, o.AfterLater = history.Attempt{}, Count{} }), reports.Pass, nil, ""},
		{"one applied twice at once", with(func(o *ManyOperations) { o.AfterFirst, o.AfterAgain = counts(1, 2, 1), counts(1, 2, 1) }),
			reports.Fail, []string{"duplicate-record seqs=1"}, "from one delivery"},
		{"not acknowledged, nothing applied", with(func(o *ManyOperations) {
			o.First, o.AfterFirst, o.AfterAgain = lostDeliveryOf("evt_1", 1), counts(0, 0, 0), counts(1, 1, 1)
		}), reports.Unknown, nil, "was not acknowledged"},
		{"published", with(func(o *ManyOperations) {
			o.First, o.Again, o.Later = publication("evt_1", 1), publication("evt_1", 2), publication("evt_2", 3)
		}), reports.Pass, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, OneMessageManyOperations(tt.o), tt.verdict, tt.want, tt.says)
		})
	}
}
