package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestFailedThenRedelivered(t *testing.T) {
	tests := []struct {
		name    string
		first   history.Attempt
		failed  int
		again   Eventually
		effects Count
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"a 5xx, then the redelivery takes effect", delivery(1, 502), 1, redeliveries(delivery(2, 200)), effects(1), reports.Pass, nil, ""},
		{"marked as seen on failure", delivery(1, 502), 1, redeliveries(delivery(2, 200)), effects(0),
			reports.Fail, []string{"dropped-event seqs=1,2"}, "marked as seen although its effect failed"},
		{"near miss: the redelivery got no answer", delivery(1, 502), 1, redeliveries(lostDelivery(2)), effects(0), reports.Unknown, nil, "got no answer"},
		{"acknowledged despite the failure, no effect", delivery(1, 200), 1, redeliveries(), effects(0),
			reports.Fail, []string{"dropped-event seqs=1"}, "was acknowledged but never took effect"},
		{"acknowledged despite the failure, retried inside", delivery(1, 200), 1, redeliveries(), effects(1), reports.Pass, nil, ""},
		{"two effects", delivery(1, 503), 1, redeliveries(delivery(2, 200)), effects(2),
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times"},
		{"the redelivery failed too", delivery(1, 502), 1, redeliveries(delivery(2, 502)), effects(0),
			reports.Fail, []string{"server-error seqs=2"}, "got 502"},
		{"the redelivery refused", delivery(1, 502), 1, redeliveries(delivery(2, 400)), effects(0),
			reports.Fail, []string{"wrong-status seqs=2"}, "got 400"},
		{"the redelivery in flight for ever", delivery(1, 502), 1, redeliveries(delivery(2, 409), delivery(3, 409)), effects(0),
			reports.Fail, []string{"stuck-key seqs=2,3"}, "stuck"},
		{"the failure never reached the consumer", delivery(1, 200), 0, redeliveries(), effects(1), reports.Unknown, nil, "made no downstream call"},
		{"published, redelivered by the broker", publication(testEvent, 1), 1, redeliveries(), effects(1), reports.Pass, nil, ""},
		{"published, marked as seen on failure", publication(testEvent, 1), 1, redeliveries(), effects(0),
			reports.Fail, []string{"dropped-event seqs=1"}, "marked as seen"},
		{"not confirmed by the broker", publication(testEvent, 1, history.Unknown), 1, redeliveries(), effects(0), reports.Unknown, nil, "got no answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, FailedThenRedelivered(tt.first, tt.failed, tt.again, tt.effects), tt.verdict, tt.want, tt.says)
		})
	}
}
