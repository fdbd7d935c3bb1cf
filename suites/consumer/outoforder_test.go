package consumer

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestOutOfOrderProperty(t *testing.T) {
	t.Parallel()
	expectCaught(t, "out-of-order", consumerHarness(t, consumer.MutantNone, webhookTarget),
		consumerHarness(t, consumer.MutantOrderBlind, webhookTarget), reports.KindOlderEventApplied)
}

// Without a state observer the property is skipped, and says why.
func TestOutOfOrderWithoutState(t *testing.T) {
	t.Parallel()
	doc := dropLine(t, webhookTarget, "    state: ")
	v, why := runProperty(t, consumerHarness(t, consumer.MutantOrderBlind, doc), "out-of-order")
	if v != reports.Skipped || !strings.Contains(why, "no state observer") {
		t.Errorf("out-of-order without a state observer: %s: %s; want skipped", v, why)
	}
}

func TestOutOfOrderPropertyOnBrokers(t *testing.T) {
	t.Parallel()
	expectCaughtOnBrokers(t, "out-of-order", consumerRig{}, consumer.MutantOrderBlind, reports.KindOlderEventApplied, queueTransports...)
}
