package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestLostAck(t *testing.T) {
	tests := []struct {
		name      string
		lost      history.Attempt
		processed Count
		again     Eventually
		effects   Count
		verdict   reports.Verdict
		want      []string
		says      string
	}{
		{"the redelivery is a duplicate", lostDelivery(1), effects(1), redeliveries(delivery(2, 200)), effects(1), reports.Pass, nil, ""},
		{"the redelivery took effect again", lostDelivery(1), effects(1), redeliveries(delivery(2, 200)), effects(2),
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times, want 1"},
		{"near miss: in flight, then a duplicate", lostDelivery(1), effects(1), redeliveries(delivery(2, 409), delivery(3, 200)), effects(1), reports.Pass, nil, ""},
		{"the redelivery refused", lostDelivery(1), effects(1), redeliveries(delivery(2, 400)), effects(1),
			reports.Fail, []string{"wrong-status seqs=2"}, "got 400"},
		{"the redelivery failed", lostDelivery(1), effects(1), redeliveries(delivery(2, 500)), effects(1),
			reports.Fail, []string{"server-error seqs=2"}, "got 500"},
		{"the redelivery stuck in flight", lostDelivery(1), effects(1), redeliveries(delivery(2, 409), delivery(3, 409)), effects(1),
			reports.Fail, []string{"stuck-key seqs=2,3"}, "stuck"},
		{"the redelivery acknowledged, the effect gone", lostDelivery(1), effects(1), redeliveries(delivery(2, 200)), effects(0),
			reports.Fail, []string{"dropped-event seqs=1,2"}, "the event was dropped"},
		{"the answer was not cut", delivery(1, 200), effects(1), redeliveries(delivery(2, 200)), effects(1), reports.Unknown, nil, "did not cut"},
		{"the cut delivery never took effect", lostDelivery(1), effects(0), redeliveries(delivery(2, 200)), effects(1), reports.Unknown, nil,
			"may have been cut before it reached the consumer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, LostAck(tt.lost, tt.processed, tt.again, tt.effects), tt.verdict, tt.want, tt.says)
		})
	}
}
