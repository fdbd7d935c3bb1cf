package reports

import (
	"maps"
	"testing"
	"time"
)

// sampleRun is a complete run with one property of each verdict; the race
// failure carries full evidence.
func sampleRun() *Run {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return &Run{
		Schema: SchemaVersion,
		RunID:  "r-1",
		Tool:   "retrysafe dev",
		Target: TargetInfo{
			Name:      "reference",
			File:      "targets/examples/reference.yaml",
			Instances: []string{"http://127.0.0.1:8081", "http://127.0.0.1:8082"},
			Profile:   map[string]string{"mismatch_status": "422", "retention": "24h"},
		},
		Started:  start,
		Finished: start.Add(12*time.Second + 300*time.Millisecond),
		Seed:     42,
		Key:      "k-fixed",
		Complete: true,
		ExitCode: 1,
		Properties: []Property{
			{
				Name: "replay", Must: "replays return the first answer", Catches: []string{"replay-reexecutes"},
				Labels: []string{"property:replay"}, Verdict: Pass, Duration: 1200 * time.Millisecond,
				Specs: []Spec{
					{Text: "answers every replay like the first", Verdict: Pass, Duration: 700 * time.Millisecond},
					{Text: "leaves exactly one record", Verdict: Pass, Duration: 500 * time.Millisecond},
				},
			},
			{
				Name: "race", Must: "one record per burst", Catches: []string{"race", "loser-500"},
				Labels: []string{"property:race"}, Verdict: Fail, Duration: 8100 * time.Millisecond,
				Figures: map[string]string{"arrival_spread_p50": "1.2ms"},
				Specs: []Spec{
					{Text: "never answers 5xx", Verdict: Pass, Duration: 4 * time.Second},
					{
						Text: "leaves exactly one record per round", Verdict: Fail,
						Failure:   "round 3: expected 1 record, found 2",
						Anomalies: []Anomaly{{Kind: KindDuplicateRecord, Op: "orders", Key: "k-fixed", Seqs: []int64{1, 2}, Message: "2 business records for one operation"}},
						Duration:  4100 * time.Millisecond,
						Evidence: &Evidence{
							Message:   "two requests with key k-fixed were both processed",
							Attempts:  []string{"#1 op=create\n> POST /orders\n< 201 Created", "#2 op=create\n< 201 Created", "#3 op=create\n< 201 Created", "#4 op=create\n< 201 Created"},
							Counts:    map[string]int{"records(orders, alice)": 2, "rounds": 20},
							DiffPaths: []string{"$.id", "$.created_at"},
							Repro:     "retrysafe run --target targets/examples/reference.yaml --focus 'race' --seed 42 --key k-fixed",
						},
					},
				},
			},
			{
				Name: "mismatch", Verdict: Unknown, Reason: "2 attempts timed out", Duration: 3 * time.Second,
				Specs: []Spec{{Text: "rejects a variant body", Verdict: Unknown, Failure: "timeout after 1s"}},
			},
			{Name: "expiry", Verdict: Skipped, Reason: "retention 24h exceeds --max-wait 30s"},
		},
	}
}

func TestCombine(t *testing.T) {
	tests := []struct {
		name string
		in   []Verdict
		want Verdict
	}{
		{"none", nil, Pass},
		{"all pass", []Verdict{Pass, Pass}, Pass},
		{"skipped ignored", []Verdict{Pass, Skipped}, Pass},
		{"only skipped", []Verdict{Skipped}, Pass},
		{"unknown beats pass", []Verdict{Pass, Unknown, Skipped}, Unknown},
		{"fail beats unknown", []Verdict{Unknown, Fail, Pass}, Fail},
		{"empty verdict is unknown", []Verdict{Pass, ""}, Unknown},
		{"invalid verdict is unknown", []Verdict{"flaky"}, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Combine(tt.in...); got != tt.want {
				t.Errorf("Combine(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRunVerdict(t *testing.T) {
	props := func(vs ...Verdict) []Property {
		ps := make([]Property, len(vs))
		for i, v := range vs {
			ps[i] = Property{Name: string(v), Verdict: v}
		}
		return ps
	}
	tests := []struct {
		name     string
		complete bool
		props    []Property
		want     Verdict
	}{
		{"all pass", true, props(Pass, Pass), Pass},
		{"skips ignored", true, props(Pass, Skipped), Pass},
		{"one unknown", true, props(Pass, Unknown, Skipped), Unknown},
		{"one fail", true, props(Pass, Unknown, Fail), Fail},
		{"incomplete without failure", false, props(Pass, Pass), Unknown},
		{"incomplete with failure", false, props(Fail, Pass), Fail},
		{"sample", true, sampleRun().Properties, Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Run{Complete: tt.complete, Properties: tt.props}
			if got := r.Verdict(); got != tt.want {
				t.Errorf("Verdict() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCounts(t *testing.T) {
	r := sampleRun()
	r.Properties = append(r.Properties, Property{Name: "odd", Verdict: "bogus"})
	tests := []struct {
		name string
		got  map[Verdict]int
		want map[Verdict]int
	}{
		{"run", r.Counts(), map[Verdict]int{Pass: 1, Fail: 1, Unknown: 2, Skipped: 1}},
		{"race specs", r.Properties[1].Counts(), map[Verdict]int{Pass: 1, Fail: 1}},
		{"no specs", r.Properties[3].Counts(), map[Verdict]int{}},
	}
	for _, tt := range tests {
		if !maps.Equal(tt.got, tt.want) {
			t.Errorf("%s: Counts() = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
