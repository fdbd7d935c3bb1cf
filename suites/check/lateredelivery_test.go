package check

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestLateRedelivery(t *testing.T) {
	late := func(after time.Duration, a history.Attempt, n int) LateDelivery {
		return LateDelivery{After: after, Delivery: a, Effects: effects(n)}
	}
	ok := []LateDelivery{late(300*time.Millisecond, delivery(2, 200), 1), late(time.Second, delivery(3, 200), 1), late(2700*time.Millisecond, delivery(4, 200), 1)}
	tests := []struct {
		name     string
		first    history.Attempt
		firstEff Count
		late     []LateDelivery
		verdict  reports.Verdict
		want     []string
		says     string
	}{
		{"still a duplicate at every delay", delivery(1, 200), effects(1), ok, reports.Pass, nil, ""},
		{"forgotten after a second", delivery(1, 200), effects(1),
			[]LateDelivery{ok[0], late(1500*time.Millisecond, delivery(3, 200), 2), late(2700*time.Millisecond, delivery(4, 200), 3)},
			reports.Fail, []string{"duplicate-record seqs=1,3"}, "the redelivery 1.5s after the first delivery (dedupe retention 3s) took effect again (2 effects)"},
		{"near miss: counted past the retention on a loaded machine", delivery(1, 200), effects(1),
			[]LateDelivery{ok[0], {After: 2700 * time.Millisecond, Counted: 3539 * time.Millisecond, Delivery: delivery(3, 200), Effects: effects(2)}},
			reports.Pass, nil, ""},
		{"counted late, but a delay before it already forgot", delivery(1, 200), effects(1),
			[]LateDelivery{{After: 1350 * time.Millisecond, Counted: 1400 * time.Millisecond, Delivery: delivery(2, 200), Effects: effects(2)},
				{After: 2700 * time.Millisecond, Counted: 3539 * time.Millisecond, Delivery: delivery(3, 200), Effects: effects(3)}},
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "1.35s after the first delivery"},
		{"near miss: a redelivery without an answer", delivery(1, 200), effects(1), []LateDelivery{late(time.Second, lostDelivery(2), 1)}, reports.Unknown, nil, "got no answer"},
		{"the first delivery took effect twice", delivery(1, 200), effects(2), ok, reports.Fail, []string{"duplicate-record seqs=1"}, ""},
		{"the first delivery was dropped", delivery(1, 200), effects(0), ok, reports.Fail, []string{"dropped-event seqs=1"}, ""},
		{"a late redelivery refused", delivery(1, 200), effects(1), []LateDelivery{late(time.Second, delivery(2, 410), 1)},
			reports.Fail, []string{"wrong-status seqs=2"}, "got 410"},
		{"a late redelivery failed", delivery(1, 200), effects(1), []LateDelivery{late(time.Second, delivery(2, 500), 1)},
			reports.Fail, []string{"server-error seqs=2"}, "got 500"},
		{"published again, still a duplicate", publication(testEvent, 1), effects(1),
			[]LateDelivery{late(time.Second, publication(testEvent, 2), 1)}, reports.Pass, nil, ""},
		{"published again, forgotten", publication(testEvent, 1), effects(1),
			[]LateDelivery{late(time.Second, publication(testEvent, 2), 2)}, reports.Fail, []string{"duplicate-record seqs=1,2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, LateRedelivery(tt.first, tt.firstEff, tt.late, 3*time.Second), tt.verdict, tt.want, tt.says)
		})
	}
}
