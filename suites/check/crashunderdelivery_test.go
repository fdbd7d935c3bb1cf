package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestCrashUnderDelivery(t *testing.T) {
	ev := func(effects Count, again Eventually, ds ...history.Attempt) []CrashedEvent {
		return []CrashedEvent{{Deliveries: ds, Again: again, Effects: effects}}
	}
	pub := publication(testEvent, 1)
	none := Eventually{}
	tests := []struct {
		name    string
		events  []CrashedEvent
		kills   int
		settled bool
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"acknowledged, redelivered, one effect", ev(effects(1), none, delivery(1, 200), delivery(2, 200)), 5, false, reports.Pass, nil, ""},
		{"a redelivery applied again", ev(effects(2), none, delivery(1, 200), delivery(2, 200)), 5, false,
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times"},
		{"cut by a kill, redelivered, one effect", ev(effects(1), redeliveries(delivery(2, 409), delivery(3, 200)), lostDelivery(1)), 5, false, reports.Pass, nil, ""},
		{"cut, acknowledged as a duplicate, no effect", ev(effects(0), redeliveries(delivery(2, 200)), lostDelivery(1)), 5, false,
			reports.Fail, []string{"dropped-event seqs=1,2"}, "never took effect"},
		{"cut, stuck in flight", ev(effects(0), redeliveries(delivery(2, 409), delivery(3, 409)), lostDelivery(1)), 5, false,
			reports.Fail, []string{"stuck-key seqs=2,3"}, "stuck"},
		{"near miss: cut and never redelivered", ev(effects(0), none, lostDelivery(1)), 5, false, reports.Unknown, nil, "never acknowledged"},
		{"published, the broker settled, no effect", ev(effects(0), none, pub), 5, true,
			reports.Fail, []string{"dropped-event seqs=1"}, "never took effect"},
		{"near miss: published, the broker not settled, no effect", ev(effects(0), none, pub), 5, false, reports.Unknown, nil, "never acknowledged"},
		{"published twice, two effects", ev(effects(2), none, pub, publication(testEvent, 2)), 5, true,
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times"},
		{"no kill hit the stream", ev(effects(2), none, delivery(1, 200)), 0, false, reports.Unknown, nil, "no kill"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, CrashUnderDelivery(tt.events, tt.kills, tt.settled), tt.verdict, tt.want, tt.says)
		})
	}
}
