package check

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// loadHistory numbers attempts in order, as the history does.
func loadHistory(as ...history.Attempt) iter.Seq[history.Attempt] {
	for i := range as {
		as[i].Seq = int64(i + 1)
	}
	return slices.Values(as)
}

func TestDeliveryLoad(t *testing.T) {
	// Object o1 at versions 1 (e1) and 2 (e2), object o2 at version 1 (e3).
	events := map[string]LoadEvent{"e1": {"o1", 1}, "e2": {"o1", 2}, "e3": {"o2", 1}}
	d := func(key string, status int) history.Attempt { return deliveryOf(key, 0, status) }
	clean := []history.Attempt{d("e2", 200), d("e1", 200), d("e3", 409), d("e3", 200), d("e2", 200)}
	one := map[string]int{"e1": 1, "e2": 1, "e3": 1}
	newest := map[string]int{"o1": 2, "o2": 1}
	with := func(m map[string]int, k string, v int) map[string]int {
		out := map[string]int{}
		for key, n := range m {
			out[key] = n
		}
		out[k] = v
		return out
	}
	tests := []struct {
		name    string
		as      []history.Attempt
		effects map[string]int
		states  map[string]int
		want    []string
	}{
		{"one effect per event, the newest state", clean, one, newest, nil},
		{"a duplicate took effect", clean, with(one, "e3", 2), newest, []string{"duplicate-record seqs=3,4"}},
		{"an acknowledged event never took effect", clean, with(one, "e1", 0), newest, []string{"dropped-event seqs=2"}},
		{"near miss: an event never acknowledged and without effect", []history.Attempt{d("e1", 200), lostDeliveryOf("e2", 0), d("e3", 200)},
			map[string]int{"e1": 1, "e2": 0, "e3": 1}, map[string]int{"o1": 1, "o2": 1}, nil},
		{"an older event overwrote a newer one", clean, one, with(newest, "o1", 1), []string{"older-event-applied seqs=1,5"}},
		{"near miss: the newest took no effect, the older state is right", []history.Attempt{d("e1", 200), lostDeliveryOf("e2", 0)},
			map[string]int{"e1": 1, "e2": 0}, map[string]int{"o1": 1}, nil},
		{"a newer version applied by a delivery without an answer", []history.Attempt{d("e1", 200), lostDeliveryOf("e2", 0)},
			map[string]int{"e1": 1, "e2": 1}, map[string]int{"o1": 1}, []string{"older-event-applied seqs=2"}},
		{"a 5xx never followed by an acknowledgement", []history.Attempt{d("e1", 200), d("e2", 503), d("e2", 409)},
			map[string]int{"e1": 1, "e2": 0}, nil, []string{"server-error seqs=2"}},
		{"near miss: a 5xx followed by an acknowledgement", []history.Attempt{d("e2", 503), d("e2", 200)}, map[string]int{"e2": 1}, nil, nil},
		{"a 5xx after an acknowledgement, not followed", []history.Attempt{d("e2", 200), d("e2", 500)}, map[string]int{"e2": 1}, nil,
			[]string{"server-error seqs=2"}},
		{"another status", []history.Attempt{d("e1", 200), d("e1", 404)}, map[string]int{"e1": 1}, nil, []string{"wrong-status seqs=2"}},
		{"near miss: 429 and the in-flight status", []history.Attempt{d("e1", 429), d("e1", 409), d("e1", 200)}, map[string]int{"e1": 1}, nil, nil},
		{"publications", []history.Attempt{publication("e1", 0), publication("e2", 0), publication("e1", 0)}, map[string]int{"e1": 1, "e2": 1},
			map[string]int{"o1": 2}, nil},
		{"a publication took effect twice", []history.Attempt{publication("e1", 0), publication("e1", 0)}, map[string]int{"e1": 2}, nil,
			[]string{"duplicate-record seqs=1,2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := DeliveryLoad(loadHistory(slices.Clone(tt.as)...), events, tt.effects, tt.states)
			verdict := reports.Pass
			if len(tt.want) > 0 {
				verdict = reports.Fail
			}
			expect(t, Result{Anomalies: res.Anomalies}, verdict, tt.want)
		})
	}
}

func TestDeliveryLoadJudge(t *testing.T) {
	tests := []struct {
		name      string
		as        []history.Attempt
		uncounted int
		verdict   reports.Verdict
		says      string
	}{
		{"counted", []history.Attempt{deliveryOf("e1", 0, 200)}, 0, reports.Pass, ""},
		{"effects not counted", []history.Attempt{deliveryOf("e1", 0, 200)}, 3, reports.Unknown, "the effects or states of 3 events"},
		{"most deliveries without an answer", []history.Attempt{deliveryOf("e1", 0, 200), lostDeliveryOf("e2", 0)}, 0, reports.Unknown,
			"1 of 2 deliveries got no answer"},
		{"nothing acknowledged", []history.Attempt{deliveryOf("e1", 0, 409)}, 0, reports.Fail, "no event was acknowledged under load (statuses 409=1)"},
		{"nothing delivered", nil, 0, reports.Unknown, "no event was delivered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := DeliveryLoad(loadHistory(tt.as...), nil, map[string]int{"e1": 1}, nil).Judge(tt.uncounted, "timeout")
			if v := res.Verdict(); v != tt.verdict {
				t.Errorf("verdict = %s, want %s\n%s", v, tt.verdict, res.Message())
			}
			if msg := res.Message(); tt.says != "" && !strings.Contains(msg, tt.says) {
				t.Errorf("message does not say %q:\n%s", tt.says, msg)
			}
		})
	}
}

// BenchmarkDeliveryLoad checks a million deliveries of 250,000 events over 25,000 objects.
func BenchmarkDeliveryLoad(b *testing.B) {
	const n = 1_000_000
	as := make([]history.Attempt, n)
	events := map[string]LoadEvent{}
	effects := map[string]int{}
	states := map[string]int{}
	for i := range as {
		key := fmt.Sprintf("evt_%07d", i/4)
		as[i] = deliveryOf(key, int64(i+1), []int{200, 409, 200, 200}[i%4])
		if i%4 == 0 {
			obj := fmt.Sprintf("obj_%06d", i/40)
			events[key] = LoadEvent{Object: obj, Version: i/4%10 + 1}
			effects[key] = 1
			states[obj] = 10
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if res := DeliveryLoad(slices.Values(as), events, effects, states); len(res.Anomalies) > 0 {
			b.Fatalf("anomalies: %s", res.AnomalyCounts())
		}
	}
}
