package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The hops of a chain (client → API → broker → consumer) an anomaly names.
const (
	// HopClient: the client (it changed its key on a retry: the API could not tell the
	// attempts apart).
	HopClient = "client"
	// HopAPI: the API (one key executed twice, or an acknowledged operation left no record).
	HopAPI = "api"
	// HopAPIBroker: from the API's commit to the broker (an event lost on the way, or one
	// record published under two event ids).
	HopAPIBroker = "api→broker"
	// HopConsumer: from the broker to the consumer's effect (an event never applied, or
	// applied twice).
	HopConsumer = "consumer"
)

// ChainReport is what the client reported of one operation.
type ChainReport string

// What a client reports of an operation.
const (
	// ChainSucceeded: the client reported the operation successful.
	ChainSucceeded ChainReport = "succeeded"
	// ChainFailed: the client reported the operation failed.
	ChainFailed ChainReport = "failed"
	// ChainUnreported: the client said nothing of it (killed, or its report could not be read).
	ChainUnreported ChainReport = ""
)

// ChainOp is one operation a client was asked to perform along a chain, and what each hop left
// of it: the joint history of one business reference.
type ChainOp struct {
	// Op names the API's operation; Ref is the operation's business reference.
	Op, Ref string
	// Reported is what the client reported of it.
	Reported ChainReport
	// Attempts are the client's attempts as they reached the API, in the order sent.
	Attempts []history.Attempt
	// Records is the API's business records of the ref.
	Records Count
	// Events are the distinct events the API published for it, as the harness observed them on
	// the broker, each with the consumer's effects.
	Events []ChainEvent
}

// ChainEvent is one event id the API published for an operation, and what the consumer did
// with it.
type ChainEvent struct {
	// ID is the event id; Seq its first observation in the history.
	ID  string
	Seq int64
	// Copies is how many times the harness observed it on the broker (or at its webhook
	// receiver: each delivery).
	Copies int
	// Unaccepted says that the consumer accepted none of its deliveries: on a webhook the
	// harness's receiver passed each on and the consumer answered none 2xx, so the API still
	// held it, its to deliver again. Always false on a broker, which took it when observed.
	Unaccepted bool
	// Effects is the consumer's effects of the event.
	Effects Count
}

// ChainRun is what a chain spec observed.
type ChainRun struct {
	// Ops are the operations the client was asked to perform.
	Ops []ChainOp
	// EventsUnseen says why the API's events could not be (all) observed ("" = they were):
	// an operation without an event is then unknown, never lost.
	EventsUnseen string
}

// Chain judges a chain end to end: every operation the client reported successful MUST have
// exactly one record and exactly one consumer effect (chain-lost-effect when it has none), and
// no operation, whatever the client reported, MAY take effect twice (chain-duplicate-effect).
// Each anomaly names the first hop where the operation broke, read from the joint history: two
// records with two keys among the client's attempts is the client's, with one key the API's;
// one record published under two event ids is the API→broker hop's; one event applied twice is
// the consumer's; an event never applied is the consumer's, unless it was a webhook the consumer
// never accepted and the API delivered once only (it is the API's to deliver again: api→broker).
// A count that could not be taken makes the operation unknown.
func Chain(run ChainRun) Result {
	var r Result
	for _, op := range run.Ops {
		r.Merge(chainOp(op, run.EventsUnseen))
	}
	return r
}

// chainOp judges one operation of a chain.
func chainOp(op ChainOp, eventsUnseen string) Result {
	var r Result
	if !op.Records.known() {
		return Unknownf("ref %s: its records could not be counted: %s", op.Ref, countErr(op.Records.Err))
	}
	effects, counted := 0, true
	for _, e := range op.Events {
		if !e.Effects.known() {
			r.Unknown = append(r.Unknown, fmt.Sprintf("ref %s: the effects of event %s could not be counted: %s", op.Ref, e.ID, countErr(e.Effects.Err)))
			counted = false
			continue
		}
		effects += e.Effects.N
	}
	if a, ok := chainDuplicate(op); ok {
		r.Anomalies = append(r.Anomalies, a)
		return r
	}
	if op.Reported != ChainSucceeded || !counted {
		return r
	}
	switch {
	case op.Records.N == 0:
		r.Anomalies = append(r.Anomalies, chainAnomaly(reports.KindChainLostEffect, HopAPI, op, attemptSeqs(op.Attempts),
			"the API holds no record of it"))
	case len(op.Events) == 0 && eventsUnseen != "":
		r.Unknown = append(r.Unknown, fmt.Sprintf("ref %s: no event of it was observed, and the API's events could not all be observed: %s", op.Ref, eventsUnseen))
	case len(op.Events) == 0:
		r.Anomalies = append(r.Anomalies, chainAnomaly(reports.KindChainLostEffect, HopAPIBroker, op, attemptSeqs(op.Attempts),
			"the API committed its record, but no event of it reached the broker"))
	case effects == 0 && len(op.Events) == 1 && op.Events[0].Unaccepted && op.Events[0].Copies == 1:
		r.Anomalies = append(r.Anomalies, chainAnomaly(reports.KindChainLostEffect, HopAPIBroker, op, chainEventSeqs(op.Events),
			fmt.Sprintf("its event %s was delivered once, the consumer did not accept it, and the API never delivered it again",
				op.Events[0].ID)))
	case effects == 0:
		r.Anomalies = append(r.Anomalies, chainAnomaly(reports.KindChainLostEffect, HopConsumer, op, chainEventSeqs(op.Events),
			fmt.Sprintf("its event %s reached the broker (%s), and the consumer never applied it",
				op.Events[0].ID, copies(op.Events[0].Copies))))
	}
	return r
}

// chainDuplicate returns the anomaly of an operation that took effect more than once, naming
// the first hop where it doubled.
func chainDuplicate(op ChainOp) (reports.Anomaly, bool) {
	if op.Records.N > 1 {
		keys := distinctKeys(op.Attempts)
		if len(keys) > 1 {
			return chainAnomaly(reports.KindChainDuplicateEffect, HopClient, op, attemptSeqs(op.Attempts), fmt.Sprintf(
				"%d records for one operation of the client: its attempts carried %d keys (%s), so the API could not tell a retry from a new operation",
				op.Records.N, len(keys), strings.Join(keys, ", "))), true
		}
		return chainAnomaly(reports.KindChainDuplicateEffect, HopAPI, op, attemptSeqs(op.Attempts), fmt.Sprintf(
			"%d records for one operation of the client, whose attempts all carried one key: the API executed it again",
			op.Records.N)), true
	}
	if len(op.Events) > 1 && op.Records.N <= 1 {
		ids := make([]string, len(op.Events))
		for i, e := range op.Events {
			ids[i] = e.ID
		}
		return chainAnomaly(reports.KindChainDuplicateEffect, HopAPIBroker, op, chainEventSeqs(op.Events), fmt.Sprintf(
			"%s published under %d event ids (%s): the consumer cannot tell them apart",
			recordWords(op.Records.N), len(ids), strings.Join(ids, ", "))), true
	}
	for _, e := range op.Events {
		if e.Effects.known() && e.Effects.N > 1 {
			return chainAnomaly(reports.KindChainDuplicateEffect, HopConsumer, op, []int64{e.Seq}, fmt.Sprintf(
				"its one event %s (%s) was applied %d times by the consumer", e.ID, copies(e.Copies), e.Effects.N)), true
		}
	}
	return reports.Anomaly{}, false
}

// chainAnomaly is an anomaly of one operation of a chain at a hop; the message starts with the
// operation's ref and what the client reported.
func chainAnomaly(kind reports.Kind, hop string, op ChainOp, seqs []int64, msg string) reports.Anomaly {
	key := ""
	if len(op.Attempts) > 0 {
		key = op.Attempts[0].Key
	}
	return reports.Anomaly{Kind: kind, Hop: hop, Op: op.Op, Key: key, Seqs: seqs,
		Message: fmt.Sprintf("ref %s, which the client reported %s: %s [hop: %s]", op.Ref, reportWord(op.Reported), msg, hop)}
}

// distinctKeys are the keys the attempts carried, in order of first use ("" for none).
func distinctKeys(atts []history.Attempt) []string {
	var keys []string
	for _, a := range atts {
		if !slices.Contains(keys, a.Key) {
			keys = append(keys, a.Key)
		}
	}
	return keys
}

// attemptSeqs are the attempts' sequence numbers.
func attemptSeqs(atts []history.Attempt) []int64 {
	seqs := make([]int64, len(atts))
	for i, a := range atts {
		seqs[i] = a.Seq
	}
	return seqs
}

// chainEventSeqs are the events' first observations.
func chainEventSeqs(evs []ChainEvent) []int64 {
	seqs := make([]int64, len(evs))
	for i, e := range evs {
		seqs[i] = e.Seq
	}
	return seqs
}

// reportWord is what the client reported, in words.
func reportWord(r ChainReport) string {
	switch r {
	case ChainSucceeded:
		return "successful"
	case ChainFailed:
		return "failed"
	}
	return "neither successful nor failed"
}

// recordWords says how many records an event was published for.
func recordWords(n int) string {
	if n == 0 {
		return "no record, yet it was"
	}
	return "its one record was"
}

// copies says how often an event was observed.
func copies(n int) string {
	if n == 1 {
		return "observed once"
	}
	return fmt.Sprintf("observed %d times", n)
}

// countErr is why a count could not be taken.
func countErr(s string) string {
	if s == "" {
		return "no observer declared"
	}
	return s
}
