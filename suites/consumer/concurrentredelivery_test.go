package consumer

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestConcurrentRedeliveryProperty(t *testing.T) {
	t.Parallel()
	rig := func(m consumer.Mutant) *framework.Harness {
		return consumerRig{mutant: m, doc: webhookTarget, instances: 2}.open(t)
	}
	expectCaught(t, "concurrent-redelivery", rig(consumer.MutantNone), rig(consumer.MutantCheckThenInsert), reports.KindDuplicateRecord)
}

func TestConcurrentRedeliveryPropertyOnBrokers(t *testing.T) {
	t.Parallel()
	// On JetStream the concurrency is the broker's own redelivery after the AckWait.
	expectCaughtOnBrokers(t, "concurrent-redelivery", consumerRig{}, consumer.MutantCheckThenInsert, reports.KindDuplicateRecord,
		targets.TransportAMQP, targets.TransportNATS)
}

// With the event id in a message header and no sink, copies of one event published at once
// are messages JetStream delivers: the burst reaches the consumer.
func TestConcurrentRedeliveryCopiesOnJetStream(t *testing.T) {
	t.Parallel()
	rig := consumerRig{noSink: true, idHeader: "X-Event-Id"}
	expectCaughtOnBrokers(t, "concurrent-redelivery", rig, consumer.MutantCheckThenInsert, reports.KindDuplicateRecord, targets.TransportNATS)
}
