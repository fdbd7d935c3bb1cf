package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// A message's delivery identity (its event id) is not its business identity: two messages can
// name one operation (a relay that lost its state publishes it again under a new id, a person
// replays it), and one message can name several. A consumer that declares operation_dedupe
// promises one effect per operation; effects are counted per operation.

// Message is what became of one message of a check: its delivery and, when that was answered
// with the in-flight status while another handling held the operation (a webhook), its
// redeliveries until one was acknowledged.
type Message struct {
	// Delivery is the message's first delivery (a webhook POST, or a publication).
	Delivery history.Attempt
	// Again are its redeliveries after an in-flight answer (none: it was not redelivered).
	Again Eventually
}

// ackedMessage judges a message: acknowledged by its delivery, or, after the in-flight status, by a
// redelivery within the time allowed.
func (j *judge) ackedMessage(m Message, what string) bool {
	a := m.Delivery
	if !isPublished(a) && a.Outcome == history.OK && InFlight(a.Status) && len(m.Again.Attempts) > 0 {
		return j.redelivered(m.Again, "the redelivery of "+what+" after its in-flight answer")
	}
	return j.acked(a, what)
}

// seqs are the numbers of the message's delivery and its last redelivery.
func (m Message) seqs() []int64 { return append([]int64{m.Delivery.Seq}, lastSeq(m.Again)...) }

// SameOperationNewMessage judges two messages with different event ids naming one business
// operation, with the same content otherwise (same-operation-new-message): each MUST be
// acknowledged, and the operation MUST take effect exactly once where the consumer declares
// operation_dedupe. Without it nothing is promised: the check is skipped, saying how many times
// the operation took effect. An operation acknowledged twice and applied never was dropped.
func SameOperationNewMessage(first, second Message, effects Count, dedupe bool) Result {
	j := newJudge(consumerProfile)
	acked1 := j.ackedMessage(first, "the first message of the operation")
	acked2 := j.ackedMessage(second, "the second message of the operation (another event id, the same operation and content)")
	seqs := append(first.seqs(), second.seqs()...)
	if !j.counted(effects) {
		return j.result()
	}
	switch {
	case effects.N == 0 && (acked1 || acked2):
		j.add(countAnomaly(reports.KindDroppedEvent, effects, fmt.Sprintf(
			"operation %s was acknowledged in two messages and never took effect: it was dropped", effects.Ref), seqs...))
	case effects.N == 0:
		j.unknownf("neither message of operation %s was acknowledged, and it took no effect", effects.Ref)
	case !dedupe:
		if len(j.r.Anomalies) == 0 && len(j.r.Unknown) == 0 {
			j.r.Skip = notPromised(effects)
		}
	case effects.N > 1:
		j.add(countAnomaly(reports.KindOperationAppliedTwice, effects, fmt.Sprintf(
			"operation %s took effect %d times from two messages naming it (events %s and %s): the consumer deduplicates on the message id, not on the operation it declares (operation_dedupe)",
			effects.Ref, effects.N, first.Delivery.Key, second.Delivery.Key), seqs...))
	}
	return j.result()
}

// notPromised is the skip reason of a consumer without operation_dedupe, with what it did.
func notPromised(effects Count) string {
	if effects.N == 1 {
		return fmt.Sprintf("the consumer declares no operation_dedupe (nothing is promised); it applied operation %s once", effects.Ref)
	}
	return fmt.Sprintf("the consumer declares no operation_dedupe (nothing is promised): the consumer applied the operation %d times: it dedupes on the message id", effects.N)
}

// ManyOperations is what one-message-many-operations observed: a message naming several
// operations, its redelivery, and (with operation_dedupe) a later message naming one of them
// again.
type ManyOperations struct {
	// First, Again and Later are the message's delivery, its redelivery (the same event id)
	// and the later message's delivery (zero when it was not sent).
	First, Again, Later history.Attempt
	// AfterFirst and AfterAgain are the effects of each operation the message names after its
	// delivery and after its redelivery, in the message's order.
	AfterFirst, AfterAgain []Count
	// AfterLater are the effects of the operation the later message named again.
	AfterLater Count
}

// OneMessageManyOperations judges a message naming several business operations
// (one-message-many-operations): it MUST be acknowledged and MUST apply each operation exactly
// once; its redelivery MUST apply none again; a later message naming one of them again (sent
// only where the consumer declares operation_dedupe) MUST apply nothing.
func OneMessageManyOperations(o ManyOperations) Result {
	j := newJudge(consumerProfile)
	acked := j.acked(o.First, "the message naming several operations")
	for _, c := range o.AfterFirst {
		if !j.counted(c) {
			continue
		}
		switch {
		case c.N == 0 && acked:
			j.add(countAnomaly(reports.KindOperationNotApplied, c, fmt.Sprintf(
				"operation %s of event %s took no effect, though the event naming it (with %d others) was acknowledged", c.Ref, o.First.Key, len(o.AfterFirst)-1), o.First.Seq))
		case c.N == 0:
			j.unknownf("the message naming operation %s was not acknowledged, and it took no effect", c.Ref)
		case c.N > 1:
			j.add(countAnomaly(reports.KindDuplicateRecord, c, fmt.Sprintf(
				"operation %s took effect %d times from one delivery of event %s", c.Ref, c.N, o.First.Key), o.First.Seq))
		}
	}
	j.acked(o.Again, "the redelivery of the message (the same event id)")
	for i, c := range o.AfterAgain {
		if j.counted(c) && i < len(o.AfterFirst) && o.AfterFirst[i].known() && c.N > max(o.AfterFirst[i].N, 1) {
			j.add(countAnomaly(reports.KindDuplicateRecord, c, fmt.Sprintf(
				"the redelivery of event %s applied operation %s again: %d effects, %d before it", o.First.Key, c.Ref, c.N, o.AfterFirst[i].N), o.First.Seq, o.Again.Seq))
		}
	}
	if o.Later.Seq == 0 {
		return j.result()
	}
	j.acked(o.Later, "the later message naming one of the operations again (another event id)")
	if c := o.AfterLater; j.counted(c) && c.N > 1 {
		j.add(countAnomaly(reports.KindOperationAppliedTwice, c, fmt.Sprintf(
			"operation %s took effect %d times: event %s named it again after event %s had applied it; the consumer declares operation_dedupe", c.Ref, c.N, o.Later.Key, o.First.Key),
			o.First.Seq, o.Later.Seq))
	}
	return j.result()
}
