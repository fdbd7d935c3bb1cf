package reports

import (
	"fmt"
	"slices"
	"strings"
)

// Kind names what a failing check found: a closed set, documented in docs/report-schema.md.
// A program that reads report.json (retrysafe matrix, say) classifies failures by Kind, never by
// the wording of a message.
type Kind string

// The anomaly kinds. The ones marked unsafe (see Kind.Unsafe) cost money or leak data when they
// happen in production; the others are behaviour that differs from what the target declares.
const (
	// KindDuplicateRecord: more business records than operations (a retry executed again).
	KindDuplicateRecord Kind = "duplicate-record"
	// KindMissingRecord: an operation was acknowledged with a 2xx but left no record of its own.
	KindMissingRecord Kind = "missing-record"
	// KindReplayDiffs: a replay differs from the first answer (Anomaly.What says in what).
	KindReplayDiffs Kind = "replay-differs"
	// KindMismatchAccepted: the same key with another payload was replayed or processed.
	KindMismatchAccepted Kind = "mismatch-accepted"
	// KindCrossTenantResponse: one tenant received the answer stored for another.
	KindCrossTenantResponse Kind = "cross-tenant-response"
	// KindForeignResponse: a request received the answer stored for another request (another
	// key, another operation).
	KindForeignResponse Kind = "foreign-response"
	// KindUnauthenticatedResponse: a request with missing or unknown credentials received a
	// stored answer.
	KindUnauthenticatedResponse Kind = "unauthenticated-response"
	// KindRejectedButRecorded: a request was rejected (or should have been) yet left a record.
	KindRejectedButRecorded Kind = "rejected-but-recorded"
	// KindWrongStatus: an answer's status is not the one the profile declares.
	KindWrongStatus Kind = "wrong-status"
	// KindServerError: a 5xx where the profile declares another answer.
	KindServerError Kind = "server-error"
	// KindNotExpired: a key was still replayed after the declared retention.
	KindNotExpired Kind = "not-expired"
	// KindStuckKey: a key still answered the in-flight status past the lock timeout.
	KindStuckKey Kind = "stuck-key"
	// KindLostAcknowledgedWrite: an operation acknowledged with a 2xx has no record after a fault.
	KindLostAcknowledgedWrite Kind = "lost-acknowledged-write"
	// KindDuplicateExecution: the operation was executed again while its first attempt was in
	// flight (a second call to the downstream provider).
	KindDuplicateExecution Kind = "duplicate-execution"
	// KindDuplicateDownstreamEffect: the downstream provider performed the effect twice (the
	// retry reached it with a new downstream key).
	KindDuplicateDownstreamEffect Kind = "duplicate-downstream-effect"
	// KindDroppedEvent: a consumer acknowledged an event (or its broker considers it delivered)
	// and no effect ever happened.
	KindDroppedEvent Kind = "dropped-event"
	// KindOlderEventApplied: a consumer let an older event overwrite the state a newer one left.
	KindOlderEventApplied Kind = "older-event-applied"
	// KindForgedEventAccepted: a consumer accepted an unsigned, wrongly signed, stale or
	// tampered delivery.
	KindForgedEventAccepted Kind = "forged-event-accepted"

	// The events an API publishes (an operation's publishes block).

	// KindMissingEvent: an operation acknowledged with a 2xx published no event within the
	// declared time (an event lost on the way from the commit to the broker).
	KindMissingEvent Kind = "missing-event"
	// KindEventNewID: one operation's event was published under a second id (a replay, a race
	// loser or a retry published it again): every consumer sees two events it cannot
	// deduplicate.
	KindEventNewID Kind = "event-new-id"
	// KindGhostEvent: an event tied to no record: published for an operation that failed, was
	// rejected or had committed nothing yet.
	KindGhostEvent Kind = "ghost-event"
	// KindEventDiffers: two copies of one event id differ outside the members the target file
	// lets differ (publishes[].ignore).
	KindEventDiffers Kind = "event-differs"

	// The client side: what a client sent the harness, playing the API.

	// KindKeyChangedOnRetry: a retry of an operation carried another key than its first attempt.
	KindKeyChangedOnRetry Kind = "key-changed-on-retry"
	// KindBodyChangedOnRetry: a retry of an operation carried other parameters than its first
	// attempt (Anomaly.What names the field).
	KindBodyChangedOnRetry Kind = "body-changed-on-retry"
	// KindKeyReusedAcrossOperations: two different operations were sent with one key.
	KindKeyReusedAcrossOperations Kind = "key-reused-across-operations"
	// KindMissingKey: a POST that was retried carried no idempotency key.
	KindMissingKey Kind = "missing-key"
	// KindKeyLostOnRestart: a client restarted with an operation pending resent it with a new key.
	KindKeyLostOnRestart Kind = "key-lost-on-restart"
	// KindRetriedRejection: a client resent a request the API rejected as invalid (400, 422, ...).
	KindRetriedRejection Kind = "retried-rejection"
	// KindRetryBeforeRetryAfter: a client retried sooner than the answer's Retry-After.
	KindRetryBeforeRetryAfter Kind = "retry-before-retry-after"
	// KindNoBackoff: a client's delay before a retry is outside its declared backoff, or under
	// 10 ms (hammering).
	KindNoBackoff Kind = "no-backoff"
	// KindNoJitter: the delays of a client that declares jitter do not vary.
	KindNoJitter Kind = "no-jitter"
	// KindUnboundedRetries: a client went on retrying past its declared attempts.
	KindUnboundedRetries Kind = "unbounded-retries"
	// KindNoRetry: a client did not retry what it declares it retries (a transient failure).
	KindNoRetry Kind = "no-retry"
	// KindAbandonedOperation: a client gave up an operation without reporting a failure, or did
	// not resume a pending one after a restart.
	KindAbandonedOperation Kind = "abandoned-operation"
	// KindUndeclaredRetry: a client retried an answer whose status its policy neither retries
	// nor never resends (a 501 when it lists only some 5xx, a 408 outside both lists).
	KindUndeclaredRetry Kind = "undeclared-retry"
	// KindFailureReportedAsSuccess: a client reported as a success an operation the API
	// answered only with errors whose body is not the declared error shape (text/plain, {}):
	// it took an error for a success, and its caller believes the operation went through.
	KindFailureReportedAsSuccess Kind = "failure-reported-as-success"

	// The chain: a client, an API, its broker and a consumer judged end to end.

	// KindChainDuplicateEffect: one operation of the client took effect more than once at the
	// end of the chain (two records, two events, or one event applied twice); Anomaly.Hop names
	// where it broke.
	KindChainDuplicateEffect Kind = "chain-duplicate-effect"
	// KindChainLostEffect: an operation the client reported successful took no effect at the end
	// of the chain (no record, no event, or an event never applied); Anomaly.Hop names where it
	// was lost.
	KindChainLostEffect Kind = "chain-lost-effect"

	// Hostile input to the API (the keys property).

	// KindTargetCrashed: the API stopped answering its health check (or a plain request) after a
	// hostile key; the anomaly names the key sent last before it did.
	KindTargetCrashed Kind = "target-crashed"
)

// One business operation, many messages (a consumer's delivery identity is not its business
// identity).
const (
	// KindOperationAppliedTwice: two messages (two event ids) naming one business operation both
	// took effect at a consumer that declares operation_dedupe: it deduplicates on the message id.
	KindOperationAppliedTwice Kind = "operation-applied-twice"
	// KindOperationNotApplied: a consumer acknowledged an event naming several business
	// operations and left one of them without an effect.
	KindOperationNotApplied Kind = "operation-not-applied"
)

// Asynchronous operations (an operation's async block).
const (
	// KindOperationNotSettled: an operation answered 202 was not done (its status resource
	// reported neither a done nor a failed state) within the async block's settle, or its 202
	// carried no reference to follow: its records were not judged.
	KindOperationNotSettled Kind = "operation-not-settled"
)

// Kinds lists every kind, in the order reports group them.
var Kinds = []Kind{KindDuplicateRecord, KindMissingRecord, KindLostAcknowledgedWrite, KindDuplicateExecution,
	KindDuplicateDownstreamEffect, KindCrossTenantResponse, KindUnauthenticatedResponse, KindForeignResponse,
	KindMismatchAccepted, KindRejectedButRecorded, KindStuckKey, KindDroppedEvent, KindOlderEventApplied,
	KindForgedEventAccepted, KindMissingEvent, KindEventNewID, KindGhostEvent, KindKeyChangedOnRetry, KindBodyChangedOnRetry,
	KindKeyReusedAcrossOperations, KindMissingKey, KindKeyLostOnRestart, KindReplayDiffs, KindEventDiffers, KindWrongStatus, KindServerError, KindNotExpired, KindRetriedRejection,
	KindRetryBeforeRetryAfter, KindNoBackoff, KindNoJitter, KindUnboundedRetries, KindNoRetry, KindAbandonedOperation,
	KindUndeclaredRetry, KindFailureReportedAsSuccess, KindChainDuplicateEffect, KindChainLostEffect,
	// hostile input
	KindTargetCrashed,
	KindOperationAppliedTwice, KindOperationNotApplied, // one operation, many messages
	KindOperationNotSettled,                                        // asynchronous operations
	KindUncertainReportedAsFailure, KindUncertainReportedAsSuccess, // a client's uncertain outcome (anomaly_uncertain.go)
}

// unsafeKinds are the kinds that count as unsafe in retrysafe matrix.
var unsafeKinds = []Kind{KindDuplicateRecord, KindMissingRecord, KindLostAcknowledgedWrite, KindDuplicateExecution,
	KindDuplicateDownstreamEffect, KindCrossTenantResponse, KindUnauthenticatedResponse, KindForeignResponse,
	KindMismatchAccepted, KindRejectedButRecorded, KindStuckKey, KindDroppedEvent, KindOlderEventApplied,
	KindForgedEventAccepted, KindMissingEvent, KindEventNewID, KindGhostEvent, KindKeyChangedOnRetry, KindBodyChangedOnRetry,
	KindKeyReusedAcrossOperations, KindMissingKey, KindKeyLostOnRestart, KindFailureReportedAsSuccess,
	KindChainDuplicateEffect, KindChainLostEffect,
	// hostile input
	KindTargetCrashed,
	KindOperationAppliedTwice, KindOperationNotApplied, // one operation, many messages
	KindUncertainReportedAsFailure, KindUncertainReportedAsSuccess, // a client's uncertain outcome
}

// Unsafe reports whether the kind is unsafe: a duplicate, a lost write, an answer or event that
// crossed a tenant, a credential or a request, an accepted mismatch, a stuck key, an event an API
// lost, published twice under two ids or published for nothing, a client's key that changed, was
// reused, went missing or was lost, a client's failure reported as a success, an operation doubled
// or lost along a chain, a target that stopped answering after a hostile key, a consumer's
// operation applied twice or not at all, an uncertain outcome a client reported as a failure or a
// success. The others
// (replay-differs, event-differs, wrong-status,
// server-error, not-expired, and a client's retries that differ from its declared policy) differ
// from what the target declares; operation-not-settled says an operation took longer than the
// target declares.
func (k Kind) Unsafe() bool { return slices.Contains(unsafeKinds, k) }

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// Anomaly is one violation a checker found, tied to the attempts it rests on.
type Anomaly struct {
	// Kind classifies the anomaly.
	Kind Kind `json:"kind"`
	// Op, Tenant and Key name the operation, the caller and the idempotency key (or event id).
	Op     string `json:"op,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	Key    string `json:"key,omitempty"`
	// Seqs are the attempts involved (their numbers in the run's history).
	Seqs []int64 `json:"seqs,omitempty"`
	// What says which part of an answer differs (replay-differs): "status", "body" or "header".
	What string `json:"what,omitempty"`
	// Field is the JSONPath of the request field involved (mismatch-accepted), if any.
	Field string `json:"field,omitempty"`
	// Hop names where along a chain the anomaly arose (chain-duplicate-effect,
	// chain-lost-effect): client, api, api→broker, broker→consumer or consumer.
	Hop string `json:"hop,omitempty"`
	// Statuses are the statuses of the first and the last of Seqs (0: no answer), filled by the
	// harness from the history: what tells anomalies of one cause apart (see Causes).
	Statuses []int `json:"statuses,omitempty"`
	// Message is one sentence about the API, in words.
	Message string `json:"message"`
	// Shards are, in a merged sharded run, the shard and local sequence number of each of Seqs.
	Shards []ShardAttempt `json:"shard_attempts,omitempty"`
}

// ShardAttempt names an attempt of a sharded run by its shard and its sequence number there.
type ShardAttempt struct {
	Shard int   `json:"shard"`
	Seq   int64 `json:"seq"`
}

// String renders the anomaly on one line.
func (a Anomaly) String() string {
	s := string(a.Kind) + ": " + a.Message
	if len(a.Seqs) > 0 {
		s += fmt.Sprintf(" (attempts %s)", seqList(a.Seqs))
	}
	return s
}

func seqList(seqs []int64) string {
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = fmt.Sprintf("#%d", s)
	}
	return strings.Join(parts, ", ")
}

// KindCounts counts anomalies by kind, in Kinds order, e.g. "duplicate-record=3, server-error=1".
func KindCounts(as []Anomaly) string {
	n := map[Kind]int{}
	for _, a := range as {
		n[a.Kind]++
	}
	var parts []string
	for _, k := range Kinds {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, n[k]))
		}
	}
	return strings.Join(parts, ", ")
}
