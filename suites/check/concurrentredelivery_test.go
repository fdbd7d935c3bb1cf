package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestConcurrentRedelivery(t *testing.T) {
	burst := []history.Attempt{delivery(1, 409), delivery(2, 200), delivery(3, 409), delivery(4, 200)}
	allInFlight := []history.Attempt{delivery(1, 409), delivery(2, 409)}
	published := []history.Attempt{publication(testEvent, 1), publication(testEvent, 2)}
	tests := []struct {
		name    string
		burst   []history.Attempt
		again   Eventually
		effects Count
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"one effect, the rest in flight or duplicates", burst, redeliveries(delivery(5, 200)), effects(1), reports.Pass, nil, ""},
		{"every delivery took effect", burst, redeliveries(delivery(5, 200)), effects(2),
			reports.Fail, []string{"duplicate-record seqs=1,2,3,4,5"}, "took effect 2 times, want 1"},
		{"in flight, then acknowledged by a redelivery", allInFlight, redeliveries(delivery(3, 409), delivery(4, 200)), effects(1), reports.Pass, nil, ""},
		{"acknowledged, never applied", allInFlight, redeliveries(delivery(3, 200)), effects(0),
			reports.Fail, []string{"dropped-event seqs=1,2,3"}, "the event was dropped"},
		{"near miss: never acknowledged, no effect", allInFlight, redeliveries(lostDelivery(3)), effects(0), reports.Unknown, nil, "got no answer"},
		{"still in flight after the lock timeout", allInFlight, redeliveries(delivery(3, 409), delivery(4, 409)), effects(0),
			reports.Fail, []string{"stuck-key seqs=3,4"}, "the key is stuck"},
		{"a 5xx in the burst", []history.Attempt{delivery(1, 200), delivery(2, 500)}, redeliveries(delivery(3, 200)), effects(1),
			reports.Fail, []string{"server-error seqs=2"}, "got 500"},
		{"another status in the burst", []history.Attempt{delivery(1, 200), delivery(2, 422)}, redeliveries(delivery(3, 200)), effects(1),
			reports.Fail, []string{"wrong-status seqs=2"}, "got 422"},
		{"in flight and not redelivered", allInFlight, redeliveries(), effects(0), reports.Unknown, nil, "was not redelivered"},
		{"published at once, one effect", published, redeliveries(), effects(1), reports.Pass, nil, ""},
		{"published at once, two effects", published, redeliveries(), effects(2), reports.Fail, []string{"duplicate-record seqs=1,2"}, ""},
		{"effects not counted", burst, redeliveries(), effectsFailed(), reports.Unknown, nil, "could not count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, ConcurrentRedelivery(tt.burst, tt.again, tt.effects), tt.verdict, tt.want, tt.says)
		})
	}
}
