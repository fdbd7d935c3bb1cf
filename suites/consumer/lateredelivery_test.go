package consumer

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// The dedupe-forgets-early cell declares a retention of 3s: the correct consumer remembers the
// event that long, the mutant forgets it after about a second.
func TestLateRedeliveryProperty(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(webhookTarget, "dedupe_retention: 72h", "dedupe_retention: 3s", 1)
	rig := func(m consumer.Mutant) *framework.Harness {
		return consumerRig{mutant: m, doc: doc, retention: 3 * time.Second}.open(t)
	}
	expectCaught(t, "late-redelivery", rig(consumer.MutantNone), rig(consumer.MutantDedupeForgetsEarly), reports.KindDuplicateRecord)
}

func TestLateDelays(t *testing.T) {
	t.Parallel()
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name               string
		retention, maxWait time.Duration
		window             time.Duration
		want               []time.Duration
	}{
		{"within a short retention", 3 * time.Second, 30 * time.Second, 0, ms(338, 675, 1350, 2025, 2700)},
		{"from below up to --max-wait", 72 * time.Hour, 30 * time.Second, 0, ms(3750, 7500, 15000, 22500, 30000)},
		{"past JetStream's duplicates window", time.Second, 30 * time.Second, 200 * time.Millisecond, ms(450, 675, 900)},
		{"a retention too short for JetStream", 300 * time.Millisecond, 30 * time.Second, 200 * time.Millisecond, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lateDelays(tt.retention, tt.maxWait, tt.window); !slices.Equal(got, tt.want) {
				t.Errorf("lateDelays(%v, %v, %v) = %v, want %v", tt.retention, tt.maxWait, tt.window, got, tt.want)
			}
		})
	}
}

func TestLateRedeliveryPropertyOnBrokers(t *testing.T) {
	t.Parallel()
	expectCaughtOnBrokers(t, "late-redelivery", consumerRig{retention: 3 * time.Second}, consumer.MutantDedupeForgetsEarly, reports.KindDuplicateRecord, queueTransports...)
}
