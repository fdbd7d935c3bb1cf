package consumer

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestLostAckProperty(t *testing.T) {
	t.Parallel()
	expectCaught(t, "lost-ack", consumerHarness(t, consumer.MutantNone, webhookTarget),
		consumerHarness(t, consumer.MutantNoDedupe, webhookTarget), reports.KindDuplicateRecord)
}
