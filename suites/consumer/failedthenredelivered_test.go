package consumer

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestFailedThenRedeliveredProperty(t *testing.T) {
	t.Parallel()
	expectCaught(t, "failed-then-redelivered", consumerHarness(t, consumer.MutantNone, webhookTarget),
		consumerHarness(t, consumer.MutantMarksSeenOnFailure, webhookTarget), reports.KindDroppedEvent)
}

func TestFailedThenRedeliveredPropertyOnBrokers(t *testing.T) {
	t.Parallel()
	expectCaughtOnBrokers(t, "failed-then-redelivered", consumerRig{}, consumer.MutantMarksSeenOnFailure, reports.KindDroppedEvent, queueTransports...)
}

// Without a sink the fail_next hook makes the first handling fail: on a webhook (a 500, then the
// harness's redelivery) and on the brokers (the broker's redelivery).
func TestFailedThenRedeliveredByHook(t *testing.T) {
	t.Parallel()
	rig := func(m consumer.Mutant) *framework.Harness {
		return consumerRig{mutant: m, doc: webhookTarget, noSink: true}.open(t)
	}
	expectCaught(t, "failed-then-redelivered", rig(consumer.MutantNone), rig(consumer.MutantMarksSeenOnFailure), reports.KindDroppedEvent)
	expectCaughtOnBrokers(t, "failed-then-redelivered", consumerRig{noSink: true}, consumer.MutantMarksSeenOnFailure, reports.KindDroppedEvent, queueTransports...)
}
