package reports

// explanations holds one entry per anomaly kind (a test makes sure every kind in Kinds has one).
// A branch that adds a kind appends its entry in a block of its own at the end.
var explanations = []Explanation{
	// The API side.
	{
		Kind:    KindDuplicateRecord,
		Meaning: "More business records than operations: one idempotency key (one operation) left two or more records, so a retry or a concurrent duplicate executed the work again.",
		Causes: []string{
			"a read-then-write claim: the key is looked up, and only later inserted without a unique constraint (or a Redis GET followed by SET without NX), so concurrent requests with one key all pass the lookup",
			"the replay path runs the handler again and only returns the stored response (the answers look perfect, the table has two rows)",
			"deduplication kept in process memory while several replicas (or a restarted process) serve the same key",
			"the record and the key's completion committed in two transactions: a crash between them lets the retry execute again",
		},
		Confirm: reproStep + "Then count the records of the key's operation with the observer query the evidence's counts name (by the operation's ref): more than one row for one ref confirms it. By hand, send the first attempt of the transcript twice at once with the same Idempotency-Key (two curl commands started together) and count again.",
	},
	{
		Kind:    KindMissingRecord,
		Meaning: "An operation was acknowledged with a 2xx, but no business record of its own exists.",
		Causes: []string{
			"the response (or the key's completion) is stored before the work happens, and the work never commits",
			"the write goes to a transaction that is rolled back, or to another database than the one the observer reads",
			"a request-controlled header is trusted as the middleware's own \"this is a replay\" marker, so the handler is skipped",
		},
		Confirm: reproStep + "Take the 2xx attempt from the transcript, note its ref, and run the operation's observer query for that ref: zero rows confirms it. Check whether the answer's body names a record id that does not exist.",
	},
	{
		Kind:    KindLostAcknowledgedWrite,
		Meaning: "An operation acknowledged with a 2xx has no record after a fault (a SIGKILL, a storage reset): the acknowledgement promised a write that did not survive.",
		Causes: []string{
			"the answer is sent before the record's transaction commits (an asynchronous write, a write-behind cache)",
			"the record is written to a store that is not durable (an in-memory store, fsync off, a Redis without persistence) while the API declares durable: true",
			"the record and the key's completion commit separately: the key says done while the record was lost",
		},
		Confirm: reproStep + "The fault timeline of report.html shows which kill or reset came after the 2xx; count the operation's records by the ref in the transcript once the target is back: zero confirms it.",
	},
	{
		Kind:    KindDuplicateExecution,
		Meaning: "The operation ran again while its first attempt was still in flight: the downstream provider was called a second time for one key.",
		Causes: []string{
			"no in-progress state: a retry that arrives before the first attempt finished is processed instead of answered with 409 (or made to wait)",
			"an in-progress lock that expires sooner than the real work takes (a lock timeout shorter than the slowest handler)",
			"the claim of a key is released when a handler throws, although part of the work already ran",
		},
		Confirm: reproStep + "The evidence's downstream note lists the calls per ref; two calls for one ref while the first attempt was held confirm it. By hand: make the first request slow (the target's slow hook, or a slow downstream), send the same request with the same key meanwhile, and watch the downstream receive it twice.",
	},
	{
		Kind:    KindDuplicateDownstreamEffect,
		Meaning: "The downstream provider performed the effect twice: a retry reached it with a new downstream key, so the provider could not deduplicate (a second charge).",
		Causes: []string{
			"the downstream key is drawn fresh on every attempt (a new UUID per call) instead of derived from the operation's key or stored with the claim",
			"after a crash the recovered operation calls the provider again with a new key",
		},
		Confirm: reproStep + "The evidence's downstream note lists the downstream keys per ref: two different keys for one ref confirm it. Derive the downstream key from the incoming Idempotency-Key (or store it before the first call) and rerun.",
	},
	{
		Kind:    KindCrossTenantResponse,
		Meaning: "One tenant received the answer stored for another tenant's request: a stored response leaked across callers.",
		Causes: []string{
			"keys looked up globally instead of together with the caller's identity (no tenant in the unique constraint or the cache key)",
			"the tenant taken from a request header that the lookup ignores",
		},
		Confirm: reproStep + "The transcript shows tenant B's request with tenant A's key and the body A received; send A's request, then B's request with the same key and B's credentials: B getting A's record is the leak.",
	},
	{
		Kind:    KindUnauthenticatedResponse,
		Meaning: "A request with missing or unknown credentials received a stored answer: the replay was served before (or without) authentication.",
		Causes: []string{
			"the idempotency middleware runs before the authentication middleware and answers replays itself",
			"the stored response is looked up by key alone and replayed without checking the caller's current authorization",
		},
		Confirm: reproStep + "Send the transcript's first request with valid credentials, then the same key without credentials (or with an unknown token): anything but 401/403 with no stored body confirms it.",
	},
	{
		Kind:    KindForeignResponse,
		Meaning: "A request received the answer stored for another request: another key, or the same key on another operation (method or path).",
		Causes: []string{
			"the key's scope ignores the method and the path: the same key on /v1/refunds replays the /v1/orders response",
			"keys cut to a maximum length, so two long keys with a common prefix collide",
			"requests deduplicated by body alone: a new key with an identical body gets the first response",
			"the raw header value used as a store key, so a key that names another entry reads foreign data",
		},
		Confirm: reproStep + "Compare the two requests in the transcript (their keys, methods and paths) and the body each received: the second request's answer naming the first request's record confirms it.",
	},
	{
		Kind:    KindMismatchAccepted,
		Meaning: "The same key was sent with another payload and the target replayed the first result or processed the second, instead of refusing the mismatch (422 in the IETF draft, 400 at Stripe, 409 in Brandur's design: the one the file declares).",
		Causes: []string{
			"no request fingerprint stored with the key at all",
			"a fingerprint that leaves out part of the request: a body field, the query string (?dry_run=1 replayed as a live write) or the path",
			"a fingerprint computed after defaults were applied or fields dropped, so different requests hash the same",
		},
		Confirm: reproStep + "The anomaly's field names the request member that was changed; send the first request, then the same key with only that member changed: a 2xx (or the first body) instead of the declared mismatch status confirms it.",
	},
	{
		Kind:    KindRejectedButRecorded,
		Meaning: "A request was rejected (or should have been: a missing key, a mismatch, a malformed key) yet left a business record.",
		Causes: []string{
			"validation of the key or the fingerprint runs after the handler wrote the record",
			"the error answer is produced by a middleware that does not roll back the handler's transaction",
			"a missing key is treated as \"no idempotency\" and processed, although the operation declares the key required",
		},
		Confirm: reproStep + "Send the rejected request of the transcript on its own and count the records for its ref: any row after a 4xx confirms it.",
	},
	{
		Kind:    KindStuckKey,
		Meaning: "A key still answered the in-flight status (409) past the declared lock timeout: the claim of an attempt that died or failed is never released, so the operation can never complete.",
		Causes: []string{
			"an in-progress claim without an expiry, never taken over after the process that held it was killed",
			"a handler error that leaves the key in progress instead of storing the error or releasing the claim",
			"the error record written after the answer (fire-and-forget), so a retry sent at once sees \"in progress\"",
		},
		Confirm: reproStep + "After the failure (or kill) shown in the timeline, resend the transcript's request with the same key every few seconds for longer than the lock timeout: 409 on every one confirms it.",
	},
	{
		Kind:    KindReplayDiffs,
		Meaning: "A replay differs from the first answer (Anomaly.What says in what: status, body or header): the target does not return the original result for a completed key.",
		Causes: []string{
			"the replay re-renders the current state of the record instead of the stored response (fine if the contract says so: declare it)",
			"only the status is stored and the body is rebuilt, or a stored error is replayed with another problem detail",
			"volatile fields (timestamps, request ids) in the body that the target file does not list as ignored",
		},
		Confirm: reproStep + "The differing JSON paths list where the answers differ; send the request twice with one key and diff the two bodies. If the differing members are volatile by design, list them in profile.ignore (json_paths, headers).",
	},
	{
		Kind:    KindWrongStatus,
		Meaning: "An answer's status is not the one the target file's profile declares for that case (a mismatch, a missing key, an in-flight retry, an expired key).",
		Causes: []string{
			"the profile declares another convention than the API implements (the IETF draft's 422 vs Stripe's 400 vs 409): run retrysafe probe to see what the API does",
			"a framework's default error handler answering before the idempotency layer",
		},
		Confirm: reproStep + "The transcript shows the status received; compare it with the profile's field for the case. If the API is right and the file wrong, `retrysafe probe FILE --suggest NEW.yaml` writes the file with the probed statuses.",
	},
	{
		Kind:    KindServerError,
		Meaning: "A 5xx where the profile declares another answer: the target failed where it should have refused, waited or replayed.",
		Causes: []string{
			"the loser of a concurrent claim hits a unique-constraint violation that surfaces as 500 instead of 409 or the replay",
			"a completed record rewritten without the fingerprint it was claimed with, so every identical retry fails the payload check with a 5xx",
			"a malformed, empty or over-long key reaching the store (a column too short, a key that is not valid in the cache)",
		},
		Confirm: reproStep + "Look at the 5xx attempt's request in the transcript and the target's own log at that time (the run's process output, for a managed target): the stack trace usually names the constraint or the store call.",
	},
	{
		Kind:    KindNotExpired,
		Meaning: "A key was still replayed after the declared retention (plus a margin): the target keeps keys longer than the file says.",
		Causes: []string{
			"no expiry at all (no TTL on the key, no pruning job)",
			"the retention in the target file differs from the configured one (hours vs minutes, the pruner's schedule)",
		},
		Confirm: reproStep + "Send a request, wait the declared retention plus a little, resend it with the same key: a replay (or the replay header) instead of the declared expired behaviour confirms it. If the longer retention is intended, declare it.",
	},

	// A consumer of events.
	{
		Kind:    KindDroppedEvent,
		Meaning: "A consumer acknowledged an event (or its broker considers it delivered) and its effect never happened.",
		Causes: []string{
			"the message acknowledged before the effect commits: a crash in between loses it",
			"the event id claimed as done in its own transaction before the effect, so the redelivery after a crash is skipped as a duplicate",
			"a failed handling that still marks the event seen",
			"deduplication on a hash of the content without the id, so a second event with the same content is dropped",
		},
		Confirm: reproStep + "The keys are the event ids; after the run, look the id up in the consumer's dedupe table and its effect in the effects table (the observer queries): an id marked seen with no effect confirms it.",
	},
	{
		Kind:    KindOlderEventApplied,
		Meaning: "A consumer let an older event overwrite the state a newer one left (events arrive out of order and were applied in arrival order).",
		Causes: []string{
			"the state set to each event's payload without comparing the event's version or timestamp with the stored one",
			"the version compared in application code, outside the update (read, compare, write with no condition)",
		},
		Confirm: reproStep + "Deliver the newer event, then the older one (the transcript holds both), then read the object's state with the state observer: the older version confirms it. An UPDATE ... WHERE version < new is the usual fix.",
	},
	{
		Kind:    KindForgedEventAccepted,
		Meaning: "A webhook consumer accepted an unsigned, wrongly signed, stale, future-dated or tampered delivery.",
		Causes: []string{
			"the signature not verified at all, or verified over a re-serialised body instead of the raw bytes",
			"the timestamp's age not bounded, so a captured delivery replays for ever (or only bounded in the past)",
		},
		Confirm: reproStep + "The transcript shows the delivery and its headers; resend it with one byte of the body changed (or with an old webhook-timestamp): a 2xx and an effect confirm it.",
	},

	// The events an API publishes.
	{
		Kind:    KindMissingEvent,
		Meaning: "An operation acknowledged with a 2xx published no event within the declared time: an event lost between the commit and the broker.",
		Causes: []string{
			"the dual write: the event published from the request after the commit, outside any transaction, so a crash or a broker outage in between loses it",
			"an outbox relay that marks a row sent although its publication failed, or gives up after a few failed tries",
		},
		Confirm: reproStep + "For the operation's ref in the transcript, look for its event on the broker (or the outbox table): none after the declared within confirms it. The fault timeline shows the kill or the cut link it followed.",
	},
	{
		Kind:    KindEventNewID,
		Meaning: "One operation's event was published under a second id (a replay, a race loser or a relay retry published it again): consumers see two events they cannot deduplicate.",
		Causes: []string{
			"a replay (or the loser of a race) writes the event to the outbox again under a new id",
			"the relay mints a new event id per publication attempt instead of using the outbox row's id",
		},
		Confirm: reproStep + "List the events observed for the operation's ref: two ids for one record confirm it. The event id must be the outbox row's, stable across republications.",
	},
	{
		Kind:    KindGhostEvent,
		Meaning: "An event tied to no record: published for an operation that failed, was rejected, or had committed nothing yet.",
		Causes: []string{
			"the event published before the work commits (straight to the broker, not through the outbox)",
			"the event published from a request that is then rejected or rolled back",
		},
		Confirm: reproStep + "The event's tie (its ref or record id) names an operation; count that operation's records: zero, or a 4xx/5xx answer for it, confirms it.",
	},
	{
		Kind:    KindEventDiffers,
		Meaning: "Two copies of one event id differ outside the members the target file lets differ (publishes[].ignore).",
		Causes: []string{
			"the event rebuilt from the current record on each publication instead of stored once in the outbox",
			"a send time or attempt counter inside the payload that the file does not list as ignored",
		},
		Confirm: reproStep + "Compare the two copies the evidence shows; if the differing member is volatile by design, add it to publishes[].ignore.",
	},

	// A client of an idempotent API.
	{
		Kind:    KindKeyChangedOnRetry,
		Meaning: "A retry of an operation carried another idempotency key than its first attempt: to the API each retry is a new operation.",
		Causes: []string{
			"the key generated inside the retry loop (per attempt) instead of once per logical operation",
			"an HTTP middleware that adds a fresh key to every request it sends",
		},
		Confirm: reproStep + "The client timeline of report.html shows each attempt's key; run the client against any echo server and compare the Idempotency-Key of its retries.",
	},
	{
		Kind:    KindBodyChangedOnRetry,
		Meaning: "A retry of an operation carried other parameters than its first attempt (Anomaly.What names the field): the API sees a key reused with another payload.",
		Causes: []string{
			"a timestamp, nonce or generated id computed per attempt and put in the body",
			"the body rebuilt from mutable state between attempts",
		},
		Confirm: reproStep + "Diff the bodies of the first attempt and the retry in the transcript; the named field is the one that drifts. Build the body once, with the key, before the first attempt.",
	},
	{
		Kind:    KindKeyReusedAcrossOperations,
		Meaning: "Two different operations were sent with one key: the API replays the first operation's result for the second, which is silently lost.",
		Causes: []string{
			"the key derived from a business reference (an order number) that two operations share",
			"a key cached per session or per client instance and reused",
		},
		Confirm: reproStep + "The transcript shows both operations with the one key; ask the client for two operations on the same reference and compare their keys.",
	},
	{
		Kind:    KindMissingKey,
		Meaning: "A POST that the client retried carried no idempotency key: a retry of a non-idempotent request may execute twice.",
		Causes: []string{
			"the SDK retries POSTs but adds a key only when the caller passes one",
			"the key dropped after a restart while the pending operation is resent",
		},
		Confirm: reproStep + "Look at the retried attempts' headers in the transcript: no Idempotency-Key (or the declared header) confirms it.",
	},
	{
		Kind:    KindKeyLostOnRestart,
		Meaning: "A client restarted with an operation pending resent it with a new key: the key lived only in memory.",
		Causes: []string{
			"the key kept in process memory, not stored with the pending operation",
			"the pending operation stored without its key, so recovery draws a new one",
		},
		Confirm: reproStep + "Kill the client while an attempt is held, start it again and compare the key of the first attempt after the restart with the one before.",
	},
	{
		Kind:    KindRetriedRejection,
		Meaning: "A client resent a request the API rejected as invalid (400, 401, 403, 404, 422): the request is wrong, not unlucky, and the retry cannot succeed.",
		Causes: []string{
			"every non-2xx treated as transient",
			"a retry condition written as \"not 2xx\" or \">= 400\" instead of a list of transient statuses",
		},
		Confirm: reproStep + "The transcript shows the rejection and the resend that followed with the same key; answer the client's request with a 422 from any stub server and count its attempts.",
	},
	{
		Kind:    KindRetryBeforeRetryAfter,
		Meaning: "A client retried sooner than the answer's Retry-After (seconds or an HTTP date, on 429 or 503).",
		Causes: []string{
			"Retry-After ignored, or read only on some statuses (503 but not 429)",
			"Retry-After parsed as seconds only, so an HTTP date is ignored",
		},
		Confirm: reproStep + "The client timeline shows the delay after the answer that carried Retry-After; answer 429 with Retry-After: 2 from a stub and time the next attempt.",
	},
	{
		Kind:    KindNoBackoff,
		Meaning: "A client's delay before a retry is outside its declared backoff, or under 10 ms (hammering).",
		Causes: []string{
			"retries in a tight loop, with no delay",
			"a backoff that does not grow, or that starts from another base than declared",
		},
		Confirm: reproStep + "The client timeline of report.html draws each delay against the declared bounds; compare the delays the transcript's timestamps give with the policy in the file.",
	},
	{
		Kind:    KindNoJitter,
		Meaning: "The delays of a client that declares jitter do not vary: many clients retrying at once retry in lockstep.",
		Causes: []string{
			"the exponential cap used as the delay, with no random draw",
			"a random source seeded with a constant",
		},
		Confirm: reproStep + "Compare the delays of the same retry number across operations in the client timeline: equal delays confirm it.",
	},
	{
		Kind:    KindUnboundedRetries,
		Meaning: "A client went on retrying past its declared attempts (or net/http re-sent an attempt the client never counted).",
		Causes: []string{
			"max attempts not enforced, or reset after a restart",
			"a request body left rewindable (GetBody) so Go's net/http re-sends a request carrying an Idempotency-Key on a reused connection that closed",
		},
		Confirm: reproStep + "Count the attempts of one operation in the transcript against max_attempts; fail every attempt from a stub server and count.",
	},
	{
		Kind:    KindNoRetry,
		Meaning: "A client did not retry what it declares it retries (a transient failure: no response, a 5xx, 409, 429).",
		Causes: []string{
			"retries disabled by default, or enabled only for idempotent methods",
			"a status the policy lists (409, say) handled as final",
		},
		Confirm: reproStep + "The transcript shows one attempt and the transient answer it got; answer 503 once from a stub and check that a second attempt comes.",
	},
	{
		Kind:    KindAbandonedOperation,
		Meaning: "A client gave up an operation without reporting a failure, or did not resume a pending one after a restart.",
		Causes: []string{
			"errors swallowed after the last attempt",
			"pending operations not stored, or not read back at start",
		},
		Confirm: reproStep + "Compare the operations asked for with the client's output: an operation with neither a success nor a reported failure confirms it.",
	},
	{
		Kind:    KindUndeclaredRetry,
		Meaning: "A client retried an answer whose status its declared policy neither retries nor lists as never resent (a 501 when it lists only some 5xx, a 408 outside both lists).",
		Causes: []string{
			"a retry rule broader than the declared one (\"any 5xx\", \"any 4xx but a few\")",
			"the target file's policy out of date with the client's code",
		},
		Confirm: reproStep + "The transcript shows the status that was retried; either the client retries too much, or the file's retry lists should include it.",
	},
	{
		Kind:    KindFailureReportedAsSuccess,
		Meaning: "A client reported as a success an operation the API answered only with errors whose body is not the declared error shape: its caller believes the operation went through.",
		Causes: []string{
			"success decided from the body's parse (any JSON object) instead of the status",
			"an error shape check that treats an unknown body as success",
		},
		Confirm: reproStep + "Answer the client with a 5xx and a text/plain body from a stub: a reported success confirms it.",
	},

	// The chain.
	{
		Kind:    KindChainDuplicateEffect,
		Meaning: "One operation of the client took effect more than once at the end of the chain (two records, two events, or one event applied twice); the anomaly's hop names where it broke.",
		Causes: []string{
			"at the client hop: a new key per retry; at the api hop: a replay or race that executes again; at api→broker: a relay that republishes under a new id; at the consumer: no dedupe on the event id",
		},
		Confirm: reproStep + "Follow the operation's ref through the chain's history in report.json: the attempts as they reached the API, the events observed and the consumer's effects; the hop where one becomes two is the broken one. Then run that part's own properties (retrysafe explain on the part's anomaly kind).",
	},
	{
		Kind:    KindChainLostEffect,
		Meaning: "An operation the client reported successful took no effect at the end of the chain (no record, no event, or an event never applied); the anomaly's hop names where it was lost.",
		Causes: []string{
			"at the api hop: a 2xx before the commit; at api→broker: a dual write or a relay that marks unsent events sent; at the consumer: an ack before the effect, or a claim committed apart from the effect",
		},
		Confirm: reproStep + "Follow the operation's ref through the chain's history in report.json; the last hop where it is present names the part that lost it.",
	},
	// Hostile input (issue 37).
	{
		Kind:    KindTargetCrashed,
		Meaning: "The API stopped answering (its health check, or a plain request) right after a hostile key: a key that contains a separator, a wildcard, a control character or a store command word, or that names another entry of the store. The anomaly names the key that preceded the crash.",
		Causes: []string{
			"the raw header value used as a store key: a key that names an entry of another type (a Redis hash where a string is expected) makes every command on it fail, and an unhandled error ends the process",
			"a key interpolated into a pattern (a SQL LIKE, a Redis SCAN or KEYS pattern, a file path) where `%`, `*` or `..` mean something",
			"a key longer than a buffer, a column or a header limit, with the error not caught",
		},
		Confirm: reproStep + "Send the key the anomaly names (redacted in the report: take it from the run's own log or rerun with the same seed) to the operation once with curl, then ask the health check: no answer confirms it. Escape or hash the key before it reaches the store (a fixed prefix and the key's SHA-256, say) and rerun.",
	},
	// One business operation, many messages (issue 40).
	{
		Kind:    KindOperationAppliedTwice,
		Meaning: "Two messages with different event ids that name one business operation (consumers[].event.operation) both took effect, at a consumer that declares operation_dedupe: true. It deduplicates on the message (delivery) id only, so a re-publication under a new id, or a manual replay, pays twice.",
		Causes: []string{
			"the dedupe table is keyed by the broker's message id or the webhook id, not by the business operation the event names",
			"a relay that lost its state republished the operation's event under a new message id, and the consumer trusted the id",
			"a unique constraint on the event id but none on the operation (a payment id, an order id) the effect belongs to",
		},
		Confirm: reproStep + "Publish the same event twice by hand with two different ids and the same operation (the evidence lists both ids and the operation), then count the operation's effects with the effects observer: two confirm it. Key the consumer's claim by the operation and rerun.",
	},
	{
		Kind:    KindOperationNotApplied,
		Meaning: "A consumer acknowledged an event that names several business operations (consumers[].event.operations) and left at least one of them without an effect.",
		Causes: []string{
			"the handler applies only the first item of the event's list (or the last), or stops at the first item it has already seen",
			"the whole event is deduplicated by its id after a partial failure, so the items not yet applied are never retried",
		},
		Confirm: reproStep + "Deliver the event the evidence names once and count each listed operation's effects with the effects observer: an operation with zero effects confirms it. Give each operation its own claim and acknowledge the message only once every operation is applied.",
	},
	// Asynchronous operations (issue 39).
	{
		Kind:    KindOperationNotSettled,
		Meaning: "An operation answered 202 was not done within the async block's settle (its status resource reported neither a done nor a failed state), or its 202 carried no reference to follow. Its records were not judged: the API took longer than the target file declares, which is not unsafe by itself.",
		Causes: []string{
			"the worker that runs accepted operations is down, stuck, or slower than `settle` under the run's load",
			"the job lives only in the accepting process's memory: a crash after the 202 loses it while the status resource, read from the store, says pending forever",
			"the reference points at the wrong resource (an id from another field, a path template that does not match the API), or the state's done values do not match what the API writes",
		},
		Confirm: reproStep + "The evidence lists the operation's reference, each read's state and when it was read; GET that reference by hand until it reaches a done state. Pending forever after a restart points at a job kept in memory; a state outside done and failed points at the async block's state lists.",
	},
	// A client's uncertain outcome (issue 40).
	{
		Kind:    KindUncertainReportedAsFailure,
		Meaning: "A client reported as failed an operation none of whose attempts was answered (every connection dropped), while the API had processed the first: whether it acted was unknown, the API holds a record, and a caller told that the payment failed starts it again.",
		Causes: []string{
			"a dropped connection or a timeout handled like an error answer: after the last attempt the client throws a definite failure",
			"no pending state: the client keeps only ok and failed, so an unknown outcome has to become one of them",
		},
		Confirm: reproStep + "The transcript shows every attempt cut without an answer and the client's report (its exit code or output line) saying failed. Make the client report such an operation pending with its key, keep it in its state, and resume it with the same key on its next run.",
	},
	{
		Kind:    KindUncertainReportedAsSuccess,
		Meaning: "A client reported as done an operation none of whose attempts was answered: it fabricated a success it could not know, and its caller never learns that the operation may not have happened.",
		Causes: []string{
			"the client's result is read from its own request, not from an answer (an exit code of 0 once the retries ran out)",
			"an exception on the last attempt swallowed, and the function returns as if it had succeeded",
		},
		Confirm: reproStep + "The transcript shows every attempt cut without an answer while the client exited as on a success. Report pending (with the key) when no attempt got an answer.",
	},
}
