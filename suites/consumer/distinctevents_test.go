package consumer

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestDistinctEventsProperty(t *testing.T) {
	t.Parallel()
	expectCaught(t, "distinct-events", consumerHarness(t, consumer.MutantNone, webhookTarget),
		consumerHarness(t, consumer.MutantPayloadDedupe, webhookTarget), reports.KindDroppedEvent)
}

func TestDistinctEventsPropertyOnBrokers(t *testing.T) {
	t.Parallel()
	expectCaughtOnBrokers(t, "distinct-events", consumerRig{}, consumer.MutantPayloadDedupe, reports.KindDroppedEvent, queueTransports...)
}
