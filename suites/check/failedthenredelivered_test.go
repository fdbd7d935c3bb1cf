package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestFailedThenRedelivered(t *testing.T) {
	sunk, hooked := Failure{Calls: 1}, Failure{Hooked: true}
	tests := []struct {
		name    string
		first   history.Attempt
		failed  Failure
		again   Eventually
		effects Count
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"a 5xx, then the redelivery takes effect", delivery(1, 502), sunk, redeliveries(delivery(2, 200)), effects(1), reports.Pass, nil, ""},
		{"marked as seen on failure", delivery(1, 502), sunk, redeliveries(delivery(2, 200)), effects(0),
			reports.Fail, []string{"dropped-event seqs=1,2"}, "marked as seen although its effect failed"},
		{"near miss: the redelivery got no answer", delivery(1, 502), sunk, redeliveries(lostDelivery(2)), effects(0), reports.Unknown, nil, "got no answer"},
		{"acknowledged despite the failure, no effect", delivery(1, 200), sunk, redeliveries(), effects(0),
			reports.Fail, []string{"dropped-event seqs=1"}, "was acknowledged but never took effect"},
		{"acknowledged despite the failure, retried inside", delivery(1, 200), sunk, redeliveries(), effects(1), reports.Pass, nil, ""},
		{"two effects", delivery(1, 503), sunk, redeliveries(delivery(2, 200)), effects(2),
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times"},
		{"the redelivery failed too", delivery(1, 502), sunk, redeliveries(delivery(2, 502)), effects(0),
			reports.Fail, []string{"server-error seqs=2"}, "got 502"},
		{"the redelivery refused", delivery(1, 502), sunk, redeliveries(delivery(2, 400)), effects(0),
			reports.Fail, []string{"wrong-status seqs=2"}, "got 400"},
		{"the redelivery in flight for ever", delivery(1, 502), sunk, redeliveries(delivery(2, 409), delivery(3, 409)), effects(0),
			reports.Fail, []string{"stuck-key seqs=2,3"}, "stuck"},
		{"the failure never reached the consumer", delivery(1, 200), Failure{}, redeliveries(), effects(1), reports.Unknown, nil, "made no downstream call"},
		{"published, redelivered by the broker", publication(testEvent, 1), sunk, redeliveries(), effects(1), reports.Pass, nil, ""},
		{"published, marked as seen on failure", publication(testEvent, 1), sunk, redeliveries(), effects(0),
			reports.Fail, []string{"dropped-event seqs=1"}, "marked as seen"},
		{"not confirmed by the broker", publication(testEvent, 1, history.Unknown), sunk, redeliveries(), effects(0), reports.Unknown, nil, "got no answer"},
		{"hooked: a 500, then the redelivery takes effect", delivery(1, 500), hooked, redeliveries(delivery(2, 200)), effects(1), reports.Pass, nil, ""},
		{"hooked: marked as seen on failure", delivery(1, 500), hooked, redeliveries(delivery(2, 200)), effects(0),
			reports.Fail, []string{"dropped-event seqs=1,2"}, "marked as seen"},
		{"hooked: the hook did not fail the delivery", delivery(1, 200), hooked, redeliveries(), effects(1), reports.Unknown, nil, "did not fail the handling"},
		{"hooked, published: redelivered by the broker", publication(testEvent, 1), hooked, redeliveries(), effects(1), reports.Pass, nil, ""},
		{"hooked, published: marked as seen on failure", publication(testEvent, 1), hooked, redeliveries(), effects(0),
			reports.Fail, []string{"dropped-event seqs=1"}, "marked as seen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, FailedThenRedelivered(tt.first, tt.failed, tt.again, tt.effects), tt.verdict, tt.want, tt.says)
		})
	}
}

// A hook's failure point is named in the anomalies and the unknowns: an after-effect failure whose
// redelivery applies the event again is a duplicate at that point; the near miss, one effect,
// passes.
func TestFailedThenRedeliveredNamesThePoint(t *testing.T) {
	after := Failure{Hooked: true, Point: "after-effect"}
	tests := []struct {
		name    string
		first   history.Attempt
		again   Eventually
		effects Count
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"fails-after-effect: the redelivery applied it again", delivery(1, 500), redeliveries(delivery(2, 200)), effects(2),
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times, want 1 (the handling failed at after-effect)"},
		{"near miss: the redelivery was a duplicate", delivery(1, 500), redeliveries(delivery(2, 200)), effects(1), reports.Pass, nil, ""},
		{"published: applied again by the broker's redelivery", publication(testEvent, 1), redeliveries(), effects(2),
			reports.Fail, []string{"duplicate-record seqs=1"}, "(the handling failed at after-effect)"},
		{"the hook did not fail it", delivery(1, 200), redeliveries(), effects(1), reports.Unknown, nil, "did not fail the handling (the handling failed at after-effect)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, FailedThenRedelivered(tt.first, after, tt.again, tt.effects), tt.verdict, tt.want, tt.says)
		})
	}
}
