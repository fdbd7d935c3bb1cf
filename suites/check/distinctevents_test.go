package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestDistinctEvents(t *testing.T) {
	first, second := deliveryOf("evt_1", 1, 200), deliveryOf("evt_2", 2, 200)
	tests := []struct {
		name          string
		first, second history.Attempt
		eff1, eff2    Count
		verdict       reports.Verdict
		want          []string
		says          string
	}{
		{"both took effect once", first, second, effectsOf("evt_1", 1), effectsOf("evt_2", 1), reports.Pass, nil, ""},
		{"the second was taken for a duplicate of the first", first, second, effectsOf("evt_1", 1), effectsOf("evt_2", 0),
			reports.Fail, []string{"dropped-event seqs=1,2"}, "deduplicated on the payload, not the event id"},
		{"near miss: the second was refused, so not dropped", first, deliveryOf("evt_2", 2, 503), effectsOf("evt_1", 1), effectsOf("evt_2", 0),
			reports.Fail, []string{"server-error seqs=2"}, "got 503"},
		{"the first was dropped", first, second, effectsOf("evt_1", 0), effectsOf("evt_2", 1),
			reports.Fail, []string{"dropped-event seqs=1"}, "was acknowledged but took effect 0 times"},
		{"the second took effect twice", first, second, effectsOf("evt_1", 1), effectsOf("evt_2", 2),
			reports.Fail, []string{"duplicate-record seqs=1,2"}, "took effect 2 times"},
		{"a delivery refused", first, deliveryOf("evt_2", 2, 400), effectsOf("evt_1", 1), effectsOf("evt_2", 0),
			reports.Fail, []string{"wrong-status seqs=2"}, "expected a 2xx acknowledgement"},
		{"no answer to the second", first, lostDeliveryOf("evt_2", 2), effectsOf("evt_1", 1), effectsOf("evt_2", 0), reports.Unknown, nil, "got no answer"},
		{"published events", publication("evt_1", 1), publication("evt_2", 2), effectsOf("evt_1", 1), effectsOf("evt_2", 1), reports.Pass, nil, ""},
		{"a published event dropped", publication("evt_1", 1), publication("evt_2", 2), effectsOf("evt_1", 1), effectsOf("evt_2", 0),
			reports.Fail, []string{"dropped-event seqs=1,2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, DistinctEvents(tt.first, tt.second, tt.eff1, tt.eff2), tt.verdict, tt.want, tt.says)
		})
	}
}
