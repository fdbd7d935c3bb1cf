package suites

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestFailedThenRedeliveredProperty(t *testing.T) {
	expectCaught(t, "failed-then-redelivered", consumerHarness(t, consumer.MutantNone, webhookTarget),
		consumerHarness(t, consumer.MutantMarksSeenOnFailure, webhookTarget), reports.KindDroppedEvent)
}

func TestFailedThenRedeliveredPropertyOnBrokers(t *testing.T) {
	expectCaughtOnBrokers(t, "failed-then-redelivered", consumerRig{}, consumer.MutantMarksSeenOnFailure, reports.KindDroppedEvent, queueTransports...)
}
