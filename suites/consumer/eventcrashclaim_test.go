package consumer

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// The property kills a process, so it runs against the reference consumer that the harness
// starts from targets/examples/consumer-webhook-managed.yaml on SQLite, with the retrysafe
// binary built for the test.
func TestEventCrashAfterClaimProperty(t *testing.T) {
	t.Parallel()
	bin := buildRetrysafe(t)
	correct := managedWebhookConsumer(t, bin, consumer.MutantNone)
	mutant := managedWebhookConsumer(t, bin, consumer.MutantClaimBeforeEffect)
	expectCaught(t, "event-crash-after-claim", correct, mutant, reports.KindDroppedEvent)
}
