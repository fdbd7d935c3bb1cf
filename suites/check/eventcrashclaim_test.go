package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestEventCrashAfterClaim(t *testing.T) {
	tests := []struct {
		name    string
		first   history.Attempt
		again   Eventually
		effects Count
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"the claim is taken over after the lock timeout", lostDelivery(1), redeliveries(lostDelivery(2), delivery(3, 409), delivery(4, 200)), effects(1),
			reports.Pass, nil, ""},
		{"acknowledged as a duplicate with no effect", lostDelivery(1), redeliveries(delivery(2, 200)), effects(0),
			reports.Fail, []string{"dropped-event seqs=1,2"}, "its claim outlived the crash without its effect"},
		{"near miss: not acknowledged, no effect", lostDelivery(1), redeliveries(lostDelivery(2)), effects(0), reports.Unknown, nil, "got no answer"},
		{"the claim is never taken over", lostDelivery(1), redeliveries(delivery(2, 409), delivery(3, 409)), effects(0),
			reports.Fail, []string{"stuck-key seqs=2,3"}, "the key is stuck"},
		{"two effects", lostDelivery(1), redeliveries(delivery(2, 200)), effects(2),
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times"},
		{"a 5xx after the restart", lostDelivery(1), redeliveries(delivery(2, 503)), effects(0),
			reports.Fail, []string{"server-error seqs=2"}, "got 503"},
		{"refused after the restart", lostDelivery(1), redeliveries(delivery(2, 400)), effects(0),
			reports.Fail, []string{"wrong-status seqs=2"}, "got 400"},
		{"answered before the kill", delivery(1, 200), redeliveries(), effects(1), reports.Pass, nil, ""},
		{"effects not counted", lostDelivery(1), redeliveries(delivery(2, 200)), effectsFailed(), reports.Unknown, nil, "could not count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, EventCrashAfterClaim(tt.first, tt.again, tt.effects), tt.verdict, tt.want, tt.says)
		})
	}
}
