package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
)

func TestOutOfOrder(t *testing.T) {
	// Versions 3, 1, 2 of object obj_1, newest first: events evt_3, evt_1, evt_2.
	v := func(version int, status, n int) Versioned {
		key := []string{"", "evt_1", "evt_2", "evt_3"}[version]
		return Versioned{Version: version, Delivery: deliveryOf(key, int64(version), status), Effects: effectsOf(key, n)}
	}
	state := func(n int) Count { return Count{Op: testConsumer, Ref: "obj_1", Key: "evt_1", N: n, Taken: true} }
	tests := []struct {
		name    string
		ds      []Versioned
		state   Count
		verdict reports.Verdict
		want    []string
		says    string
	}{
		{"the newest version stays", []Versioned{v(3, 200, 1), v(1, 200, 1), v(2, 200, 1)}, state(3), reports.Pass, nil, ""},
		{"stale events discarded", []Versioned{v(3, 200, 1), v(1, 200, 0), v(2, 200, 0)}, state(3), reports.Pass, nil, ""},
		{"an older event overwrote the newest", []Versioned{v(3, 200, 1), v(1, 200, 1), v(2, 200, 1)}, state(2),
			reports.Fail, []string{"older-event-applied seqs=3,2"}, "object obj_1 ends at version 2 although version 3"},
		{"near miss: no state observer", []Versioned{v(3, 200, 1), v(1, 200, 1), v(2, 200, 1)}, Count{}, reports.Pass, nil, ""},
		{"an older event took effect twice", []Versioned{v(3, 200, 1), v(1, 200, 2), v(2, 200, 1)}, state(3),
			reports.Fail, []string{"duplicate-record seqs=1"}, "took effect 2 times"},
		{"the newest was dropped", []Versioned{v(3, 200, 0), v(1, 200, 1), v(2, 200, 1)}, state(2),
			reports.Fail, []string{"dropped-event seqs=3"}, "the event was dropped"},
		{"a stale event refused", []Versioned{v(3, 200, 1), v(1, 400, 0), v(2, 200, 0)}, state(3),
			reports.Fail, []string{"wrong-status seqs=1"}, "the delivery of version 1 (2 of 3)"},
		{"a stale event failed", []Versioned{v(3, 200, 1), v(1, 500, 0), v(2, 200, 0)}, state(3),
			reports.Fail, []string{"server-error seqs=1"}, "got 500"},
		{"the state observer reads nothing", []Versioned{v(3, 200, 1), v(1, 200, 1), v(2, 200, 1)}, state(0), reports.Unknown, nil,
			"may not read what the consumer stores"},
		{"the state could not be read", []Versioned{v(3, 200, 1)}, Count{Op: testConsumer, Key: "evt_3", Taken: true, Err: "404"}, reports.Unknown, nil, ""},
		{"nothing delivered", nil, state(0), reports.Unknown, nil, "no event was delivered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, OutOfOrder(tt.ds, tt.state), tt.verdict, tt.want, tt.says)
		})
	}
}
