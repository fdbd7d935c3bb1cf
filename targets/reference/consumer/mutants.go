package consumer

import (
	"fmt"
	"slices"
	"strings"
)

// Mutant names a deliberately broken mode of the reference consumer. The empty Mutant is
// the correct consumer. Every consumer property of the suites exists to catch at least one.
type Mutant string

// The mutants, in the order Mutants lists them.
const (
	MutantNone                   Mutant = ""
	MutantNoDedupe               Mutant = "no-dedupe"
	MutantPayloadDedupe          Mutant = "payload-dedupe"
	MutantCheckThenInsert        Mutant = "check-then-insert"
	MutantClaimBeforeEffect      Mutant = "claim-before-effect"
	MutantMarksSeenOnFailure     Mutant = "marks-seen-on-failure"
	MutantOrderBlind             Mutant = "order-blind"
	MutantNoSignatureCheck       Mutant = "no-signature-check"
	MutantStaleTimestampAccepted Mutant = "stale-timestamp-accepted"
	MutantDedupeForgetsEarly     Mutant = "dedupe-forgets-early"
	MutantAckBeforeEffect        Mutant = "ack-before-effect"
)

// The transports a consumer mutant can apply to.
const (
	TransportWebhook = "webhook"
	TransportAMQP    = "amqp"
	TransportNATS    = "nats"
)

// MutantInfo describes one mutant: its bug, where it applies and the property that must
// catch it.
type MutantInfo struct {
	Name     Mutant
	Bug      string
	Stores   []string // stores where a property is required to catch it
	Reported []string // stores where it runs and is reported but not required to be caught
	CaughtBy string   // the property that must catch it
	// Transports are those it applies to (webhook, amqp, nats).
	Transports []string
	// QueueCaughtBy is the property that must catch it on amqp and nats when not CaughtBy.
	QueueCaughtBy string
}

// CaughtOn returns the property that must catch the mutant on a transport.
func (info MutantInfo) CaughtOn(transport string) string {
	if transport != TransportWebhook && info.QueueCaughtBy != "" {
		return info.QueueCaughtBy
	}
	return info.CaughtBy
}

// AllStores lists the reference consumer's stores.
var AllStores = []string{"memory", "sqlite", "postgres", "redis"}

var (
	durableStores = []string{"sqlite", "postgres", "redis"}
	allTransports = []string{TransportWebhook, TransportAMQP, TransportNATS}
	webhookOnly   = []string{TransportWebhook}
	queuesOnly    = []string{TransportAMQP, TransportNATS}
)

// Mutants is the table of every mutant.
var Mutants = []MutantInfo{
	{MutantNoDedupe, "no claim at all: every delivery of an event takes effect",
		AllStores, nil, "redelivery", allTransports, ""},
	{MutantPayloadDedupe, "deduplicates on a hash of the body without its id: a second event with the same content is dropped as a duplicate",
		AllStores, nil, "distinct-events", allTransports, ""},
	{MutantCheckThenInsert, "looks the event up, works, then inserts, with nothing atomic between: concurrent redeliveries all take effect",
		AllStores, nil, "concurrent-redelivery", allTransports, ""},
	{MutantClaimBeforeEffect, "the claim commits as done in its own transaction before the effect: a crash in between drops the event, and its redelivery is acknowledged as a duplicate",
		durableStores, nil, "event-crash-after-claim", allTransports, "crash-after-ack"},
	{MutantMarksSeenOnFailure, "a downstream failure marks the event done anyway: the redelivery is acknowledged as a duplicate with no effect",
		AllStores, nil, "failed-then-redelivered", allTransports, ""},
	{MutantOrderBlind, "the object's state is set to each event's version, even an older one delivered late",
		AllStores, nil, "out-of-order", allTransports, ""},
	{MutantNoSignatureCheck, "signatures are not checked: any delivery is accepted",
		AllStores, nil, "signature", webhookOnly, ""},
	{MutantStaleTimestampAccepted, "the signature is checked but not its timestamp's age: a captured delivery replays forever",
		AllStores, nil, "signature", webhookOnly, ""},
	{MutantDedupeForgetsEarly, "dedupe records are forgotten after about a second, whatever the declared retention",
		AllStores, nil, "late-redelivery", allTransports, ""},
	{MutantAckBeforeEffect, "the queue transport acknowledges the message before the effect commits: a crash in between loses it (Deliver itself is correct)",
		durableStores, nil, "crash-after-ack", queuesOnly, ""},
}

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
