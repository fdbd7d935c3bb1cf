package consumer

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Mutant names a deliberately broken mode of the reference consumer. The empty Mutant is
// the correct consumer. Every consumer property of the suites exists to catch at least one.
type Mutant string

// The mutants, in the order Mutants lists them.
const (
	MutantNone                    Mutant = ""
	MutantNoDedupe                Mutant = "no-dedupe"
	MutantPayloadDedupe           Mutant = "payload-dedupe"
	MutantCheckThenInsert         Mutant = "check-then-insert"
	MutantClaimBeforeEffect       Mutant = "claim-before-effect"
	MutantMarksSeenOnFailure      Mutant = "marks-seen-on-failure"
	MutantOrderBlind              Mutant = "order-blind"
	MutantNoSignatureCheck        Mutant = "no-signature-check"
	MutantStaleTimestampAccepted  Mutant = "stale-timestamp-accepted"
	MutantDedupeForgetsEarly      Mutant = "dedupe-forgets-early"
	MutantAckBeforeEffect         Mutant = "ack-before-effect"
	MutantInMemoryDedupe          Mutant = "in-memory-dedupe"
	MutantMarkAfterEffect         Mutant = "mark-after-effect"
	MutantRawBytesDedupe          Mutant = "raw-bytes-dedupe"
	MutantFutureTimestampAccepted Mutant = "future-timestamp-accepted"
	MutantFailsAfterEffect        Mutant = "fails-after-effect"
	// The mutants of one business operation in several messages (issue 40).
	MutantMessageIDDedupe    Mutant = "message-id-dedupe"
	MutantFirstOperationOnly Mutant = "first-operation-only"
)

// The transports a consumer mutant can apply to.
const (
	TransportWebhook = "webhook"
	TransportAMQP    = "amqp"
	TransportNATS    = "nats"
)

// Shape is how the reference consumer is set up for a mutant's cell.
type Shape string

// The shapes of the reference consumer.
const (
	// ShapeSink: it calls the harness's downstream sink for each effect (the precise fault
	// paths hold or fail that call).
	ShapeSink Shape = "sink"
	// ShapeNoSink: it calls nothing of the harness's (no --downstream) and offers the test
	// hooks (--hooks: fail_next, slow), with the event id in a message header on NATS: the
	// fault paths are black-box (the broker link, the process, the hooks).
	ShapeNoSink Shape = "no-sink"
	// ShapeLongAckWait: the no-sink consumer on JetStream whose durable's AckWait (12 s, which
	// the consumer sets when it creates the durable) is longer than any wait the harness once
	// fixed: the crash properties must wait for the broker's own clock.
	ShapeLongAckWait Shape = "long-ack-wait"
)

// Shapes are the shapes of the reference consumer, in the order the self-test runs them.
var Shapes = []Shape{ShapeSink, ShapeNoSink, ShapeLongAckWait}

// LongAckWait is the AckWait of the durable in the ShapeLongAckWait shape.
const LongAckWait = 12 * time.Second

// Catch is one property that must catch a mutant: on which transports, in which shape.
type Catch struct {
	Property string
	// Transports are those it catches the mutant on (nil: every transport of the mutant).
	Transports []string
	Shape      Shape
	// Stores are the stores it is required to catch it on (nil: every store of the mutant).
	// A mutant's second proof, in the other shape, runs on SQLite alone: its first shape's
	// rows prove it on every store.
	Stores []string
}

// MutantInfo describes one mutant: its bug, where it applies and the properties that must
// catch it.
type MutantInfo struct {
	Name     Mutant
	Bug      string
	Stores   []string // stores where a property is required to catch it
	Reported []string // stores where it runs and is reported but not required to be caught
	// Transports are those it applies to (webhook, amqp, nats).
	Transports []string
	// Caught lists the properties that must catch it, each on its transports and in its shape.
	Caught []Catch
}

// CaughtBy returns the first property that must catch the mutant.
func (info MutantInfo) CaughtBy() string { return info.Caught[0].Property }

// CatchesOn returns the catches of the mutant on a transport, in table order.
func (info MutantInfo) CatchesOn(transport string) []Catch {
	var out []Catch
	for _, c := range info.Caught {
		if len(c.Transports) == 0 || slices.Contains(c.Transports, transport) {
			out = append(out, c)
		}
	}
	return out
}

// AllStores lists the reference consumer's stores.
var AllStores = []string{"memory", "sqlite", "postgres", "redis"}

var (
	durableStores = []string{"sqlite", "postgres", "redis"}
	allTransports = []string{TransportWebhook, TransportAMQP, TransportNATS}
	webhookOnly   = []string{TransportWebhook}
	queuesOnly    = []string{TransportAMQP, TransportNATS}
)

// sink and noSink are catches in either shape on the given transports (none: all).
func sink(property string, transports ...string) Catch {
	return Catch{Property: property, Transports: transports, Shape: ShapeSink}
}

func noSink(property string, transports ...string) Catch {
	return Catch{Property: property, Transports: transports, Shape: ShapeNoSink}
}

// longAckWait is a catch on JetStream in the long-ack-wait shape, required on SQLite (the
// mutant's other rows prove it on every store).
func longAckWait(property string) Catch {
	return Catch{Property: property, Transports: []string{TransportNATS}, Shape: ShapeLongAckWait, Stores: []string{"sqlite"}}
}

// also is a catch of a mutant that another catch proves on every store: required on SQLite.
func also(c Catch) Catch {
	c.Stores = []string{"sqlite"}
	return c
}

// Mutants is the table of every mutant.
var Mutants = []MutantInfo{
	{MutantNoDedupe, "no claim at all: every delivery of an event takes effect",
		AllStores, nil, allTransports, []Catch{sink("redelivery"), also(noSink("lost-ack", queuesOnly...))}},
	// Proven without a sink: the sink shape's events name their operations, and distinct-events
	// gives each twin its own, so its body differs from the first's beyond its id.
	{MutantPayloadDedupe, "deduplicates on a hash of the body without its id: a second event with the same content is dropped as a duplicate",
		AllStores, nil, allTransports, []Catch{noSink("distinct-events")}},
	{MutantCheckThenInsert, "looks the event up, works, then inserts, with nothing atomic between: concurrent redeliveries all take effect",
		AllStores, nil, allTransports, []Catch{sink("concurrent-redelivery"), also(noSink("concurrent-redelivery", TransportNATS))}},
	{MutantClaimBeforeEffect, "the claim commits as done in its own transaction before the effect: a crash in between drops the event, and its redelivery is acknowledged as a duplicate",
		durableStores, nil, allTransports, []Catch{sink("event-crash-after-claim", TransportWebhook), sink("crash-after-ack", queuesOnly...),
			also(noSink("crash-under-delivery"))}},
	{MutantMarksSeenOnFailure, "a failed handling (its downstream failed, or the fail_next hook) marks the event done anyway: the redelivery is acknowledged as a duplicate with no effect",
		AllStores, nil, allTransports, []Catch{sink("failed-then-redelivered"), also(noSink("failed-then-redelivered"))}},
	{MutantOrderBlind, "the object's state is set to each event's version, even an older one delivered late",
		AllStores, nil, allTransports, []Catch{sink("out-of-order")}},
	{MutantNoSignatureCheck, "signatures are not checked: any delivery is accepted",
		AllStores, nil, webhookOnly, []Catch{sink("signature")}},
	{MutantStaleTimestampAccepted, "the signature is checked but not its timestamp's age: a captured delivery replays forever",
		AllStores, nil, webhookOnly, []Catch{sink("signature")}},
	{MutantDedupeForgetsEarly, "dedupe records are forgotten after about a second, whatever the declared retention",
		AllStores, nil, allTransports, []Catch{sink("late-redelivery")}},
	{MutantAckBeforeEffect, "the queue transport acknowledges the message before the effect commits: a crash in between loses it (Deliver itself is correct)",
		durableStores, nil, queuesOnly, []Catch{sink("crash-after-ack"), also(noSink("crash-under-delivery"))}},
	{MutantInMemoryDedupe, "the seen-set is process memory (effects are stored): a restarted process, or another instance, applies a redelivery again",
		durableStores, nil, allTransports, []Catch{noSink("crash-under-delivery", TransportWebhook), noSink("crash-before-ack", queuesOnly...),
			longAckWait("crash-before-ack")}},
	{MutantMarkAfterEffect, "the effect commits, then the event id is recorded in a separate write: a crash between them applies the redelivery again",
		durableStores, nil, allTransports, []Catch{noSink("crash-under-delivery"), longAckWait("crash-under-delivery")}},
	{MutantRawBytesDedupe, "deduplicates on a hash of the raw body bytes: the same event re-encoded (keys reordered, other whitespace) takes effect again",
		AllStores, nil, allTransports, []Catch{noSink("redelivery")}},
	{MutantFutureTimestampAccepted, "the signed timestamp is bounded in the past only: a delivery timestamped ahead (prepared in advance) is accepted",
		AllStores, nil, webhookOnly, []Catch{noSink("signature")}},
	{MutantFailsAfterEffect, "the effect commits on its own, then an error after it (the fail_next hook's after-effect point) gives the claim back: the redelivery applies the event again",
		AllStores, nil, allTransports, []Catch{noSink("failed-then-redelivered", TransportWebhook), also(noSink("failed-then-redelivered", queuesOnly...))}},
	// One business operation, many messages: proven where the reference's events name their
	// operations (the sink shape's files declare event.operation and event.operations), on SQLite
	// (the dedupe key is the only change: every store runs the same claim on it).
	{MutantMessageIDDedupe, "deduplicates on the message id even where the event names its business operation: two messages of one operation (a relay's re-publication, a replay under a new id) both take effect",
		sqliteOnly, nil, webhookAMQP, []Catch{sink("same-operation-new-message")}},
	{MutantFirstOperationOnly, "an event naming several business operations applies the first and acknowledges the rest unapplied",
		sqliteOnly, nil, webhookAMQP, []Catch{sink("one-message-many-operations")}},
}

var (
	sqliteOnly  = []string{"sqlite"}
	webhookAMQP = []string{TransportWebhook, TransportAMQP}
)

// ParseMutant returns the mutant with this name ("" or "none" is the correct consumer).
func ParseMutant(name string) (Mutant, error) {
	if name == "" || name == "none" {
		return MutantNone, nil
	}
	for _, m := range Mutants {
		if string(m.Name) == name {
			return m.Name, nil
		}
	}
	names := make([]string, len(Mutants))
	for i, m := range Mutants {
		names[i] = string(m.Name)
	}
	return "", fmt.Errorf("unknown consumer mutant %q (known: %s)", name, strings.Join(names, ", "))
}

// Info returns the table row of a mutant.
func (m Mutant) Info() (MutantInfo, bool) {
	for _, info := range Mutants {
		if info.Name == m {
			return info, true
		}
	}
	return MutantInfo{}, false
}

// AppliesTo reports whether a property is required to catch the mutant on this store.
func (info MutantInfo) AppliesTo(store string) bool { return slices.Contains(info.Stores, store) }

// AppliesToTransport reports whether the mutant exists on this transport.
func (info MutantInfo) AppliesToTransport(transport string) bool {
	return slices.Contains(info.Transports, transport)
}
