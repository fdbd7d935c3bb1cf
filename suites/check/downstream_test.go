package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
)

// sink is what the downstream sink saw: calls, distinct keys and effects.
func sink(calls, keys, effects int) Downstream {
	d := Downstream{Calls: calls, Effects: effects, Taken: true}
	for i := range keys {
		d.Keys = append(d.Keys, string(rune('a'+i)))
	}
	return d
}

func TestDownstreamSteps(t *testing.T) {
	tests := []struct {
		name string
		step func(*judge)
		want []string
		says string
	}{
		{"one effect", func(j *judge) { j.effects(sink(2, 1, 1), 1, records(1), 1, 2) }, nil, ""},
		{"no effect", func(j *judge) { j.effects(sink(0, 0, 0), 1, records(1), 1) }, nil, ""},
		{"two effects", func(j *judge) { j.effects(sink(2, 2, 2), 1, records(1), 1, 2) }, []string{"duplicate-downstream-effect seqs=1,2"},
			"the downstream provider performed 2 effects for orders ref r1 (tenant alice) (over 2 calls with 2 distinct downstream keys), want 1"},
		{"effects not counted", func(j *judge) { j.effects(Downstream{Effects: 5}, 1, records(1), 1) }, nil, ""},
		{"one call", func(j *judge) { j.calls(sink(1, 1, 1), 1, records(1), "while held", 1) }, nil, ""},
		{"two calls", func(j *judge) { j.calls(sink(2, 1, 1), 1, records(1), "while held", 1, 2) }, []string{"duplicate-execution seqs=1,2"},
			"orders ref r1 (tenant alice) reached the downstream provider 2 times while held, want 1: it was executed again"},
		{"calls not counted", func(j *judge) { j.calls(Downstream{Calls: 3}, 1, records(1), "in all", 1) }, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(profile(t, "ietf"))
			tt.step(j)
			verdict := reports.Pass
			if tt.want != nil {
				verdict = reports.Fail
			}
			expect(t, j.result(), verdict, tt.want, tt.says)
		})
	}
}
