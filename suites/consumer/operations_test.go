package consumer

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// opsRig is a webhook rig whose events name their business operations.
var opsRig = consumerRig{doc: webhookTarget, operations: true}

// withMutant is the rig as mutant m.
func (r consumerRig) withMutant(m consumer.Mutant) consumerRig {
	r.mutant = m
	return r
}

func TestSameOperationNewMessageProperty(t *testing.T) {
	t.Parallel()
	expectCaught(t, "same-operation-new-message", opsRig.open(t), opsRig.withMutant(consumer.MutantMessageIDDedupe).open(t), reports.KindOperationAppliedTwice)
}

func TestSameOperationNewMessagePropertyOnBrokers(t *testing.T) {
	t.Parallel()
	expectCaughtOnBrokers(t, "same-operation-new-message", consumerRig{operations: true}, consumer.MutantMessageIDDedupe, reports.KindOperationAppliedTwice, queueTransports...)
}

// A consumer that does not declare operation_dedupe promises nothing about two messages of one
// operation: both specs are skipped, saying how many times the operation took effect.
func TestSameOperationNewMessageSkippedWithoutDedupe(t *testing.T) {
	t.Parallel()
	rig := consumerRig{doc: webhookTarget, operations: true, noOperationDedupe: true}
	for _, c := range []struct {
		m    consumer.Mutant
		says string
	}{
		{consumer.MutantMessageIDDedupe, "the consumer applied the operation 2 times: it dedupes on the message id"},
		{consumer.MutantNone, "it applied operation"},
	} {
		h := rig.withMutant(c.m).open(t)
		res, err := h.Run(t.Context(), selectProperty("same-operation-new-message"))
		if err != nil {
			t.Fatal(err)
		}
		specs := 0
		for _, p := range res.Report.Properties {
			for _, sp := range p.Specs {
				specs++
				if sp.Verdict != reports.Skipped || !strings.Contains(sp.Failure, c.says) {
					t.Errorf("%s: %q: %s %q, want skipped saying %q", c.m, sp.Text, sp.Verdict, sp.Failure, c.says)
				}
			}
		}
		if specs != 2 {
			t.Errorf("%s: %d specs, want 2 (in sequence, released together)", c.m, specs)
		}
	}
}

func TestOneMessageManyOperationsProperty(t *testing.T) {
	t.Parallel()
	expectCaught(t, "one-message-many-operations", opsRig.open(t), opsRig.withMutant(consumer.MutantFirstOperationOnly).open(t), reports.KindOperationNotApplied)
	// A message of one of the operations again, after the first: the message-id-dedupe mutant
	// applies it again.
	expectCaught(t, "one-message-many-operations", opsRig.open(t), opsRig.withMutant(consumer.MutantMessageIDDedupe).open(t), reports.KindOperationAppliedTwice)
}

func TestOneMessageManyOperationsPropertyOnBrokers(t *testing.T) {
	t.Parallel()
	expectCaughtOnBrokers(t, "one-message-many-operations", consumerRig{operations: true}, consumer.MutantFirstOperationOnly, reports.KindOperationNotApplied, queueTransports...)
}

// The reference consumer, whose events name their operations, passes both: distinct-events
// gives each twin an operation of its own, same-operation-new-message gives two messages one;
// also where the operation travels in a header, on a webhook and on a queue. A consumer that
// deduplicates on the payload is not caught by distinct-events when the twins' operations
// differ in the body: its row runs where events name none.
func TestDistinctEventsAndSameOperationAgree(t *testing.T) {
	t.Parallel()
	both := "property:distinct-events || property:same-operation-new-message"
	for name, rig := range map[string]consumerRig{
		"body":   opsRig,
		"header": {doc: webhookTarget, operations: true, operationHeader: "X-Operation"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			expectAllPass(t, rig.open(t), both)
		})
	}
	t.Run("header on amqp", func(t *testing.T) {
		t.Parallel()
		rig := consumerRig{operations: true, operationHeader: "X-Operation"}
		expectAllPass(t, rig.queueHarness(t, "amqp"), both)
	})
}

// selectProperty selects one property's specs.
func selectProperty(name string) framework.Selection {
	return framework.Selection{LabelFilter: "property:" + name}
}

// expectAllPass runs the specs the label filter selects and expects each to pass.
func expectAllPass(t *testing.T, h *framework.Harness, filter string) {
	t.Helper()
	res, err := h.Run(t.Context(), framework.Selection{LabelFilter: filter})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, p := range res.Report.Properties {
		for _, sp := range p.Specs {
			ran++
			if sp.Verdict != reports.Pass {
				t.Errorf("%s %s: %s %s", p.Name, sp.Text, sp.Verdict, sp.Failure)
			}
		}
	}
	if ran == 0 {
		t.Errorf("no spec matched %q", filter)
	}
}
