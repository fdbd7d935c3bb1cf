package suites

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestConcurrentRedeliveryProperty(t *testing.T) {
	rig := func(m consumer.Mutant) *Harness {
		return consumerRig{mutant: m, doc: webhookTarget, instances: 2}.open(t)
	}
	expectCaught(t, "concurrent-redelivery", rig(consumer.MutantNone), rig(consumer.MutantCheckThenInsert), reports.KindDuplicateRecord)
}

func TestConcurrentRedeliveryPropertyOnBrokers(t *testing.T) {
	// On JetStream the concurrency is the broker's own redelivery after the AckWait.
	expectCaughtOnBrokers(t, "concurrent-redelivery", consumerRig{}, consumer.MutantCheckThenInsert, reports.KindDuplicateRecord,
		targets.TransportAMQP, targets.TransportNATS)
}
