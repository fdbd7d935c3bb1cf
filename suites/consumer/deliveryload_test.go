package consumer

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

func TestDeliveryLoadProperty(t *testing.T) {
	t.Parallel()
	rig := func(m consumer.Mutant) *framework.Harness {
		return consumerRig{mutant: m, doc: webhookTarget, instances: 2}.open(t)
	}
	correct := rig(consumer.MutantNone)
	expectCaught(t, "delivery-load", correct, rig(consumer.MutantNoDedupe), reports.KindDuplicateRecord)
	expectCaught(t, "delivery-load", correct, rig(consumer.MutantCheckThenInsert), reports.KindDuplicateRecord)
}

func TestDeliveryLoadPropertyOnBrokers(t *testing.T) {
	t.Parallel()
	expectCaughtOnBrokers(t, "delivery-load", consumerRig{}, consumer.MutantNoDedupe, reports.KindDuplicateRecord, queueTransports...)
	expectCaughtOnBrokers(t, "delivery-load", consumerRig{}, consumer.MutantCheckThenInsert, reports.KindDuplicateRecord, targets.TransportAMQP)
}
