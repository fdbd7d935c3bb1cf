package targets

import (
	"maps"
	"slices"
	"strings"
)

// The registry of fields: every object of a target file and the fields the loader accepts in it,
// in the order an "unknown field" problem lists them. The loader rejects every other key (see
// decoder.object), and docs/target-file.md documents each one (TestTargetFileDocumentsEveryField).
//
// An object is named by its path from the top of the file: "." is the top level, "[]" any element
// of a list, "<status>" any key of a map (clients[].errors); "(chain file)" is the top level of a
// chain target file. Objects of one shape share one list. Adding a field to an object is adding
// it to its list; adding an object is adding a line (and decoding it with d.object or d.child,
// which name it by the same path).
var registry = map[string][]string{
	".": {"name", "instances", "shared_store", "tls", "toxiproxy", "operations", "tenants", "profile", "retention",
		"lock_timeout", "lifecycle", "downstream", "storage", "cleanup", "secrets", "hooks", "auth", "unknown_credentials",
		"consumers", "clients", "load_limits"},
	"instances[]":     {"url"},
	"tls":             {"ca_file", "insecure_skip_verify"},
	"tenants[]":       {"name", "headers", "identity", "credentials", "secrets"},
	"lifecycle":       {"command", "env", "dir", "ready", "durable", "replicas"},
	"lifecycle.ready": {"path", "timeout", "broker_consumers", "log"},
	"downstream":      {"enabled", "listen", "key_header"},
	"storage":         {"address", "listen"},
	"load_limits":     {"max_rate", "max_duration"},
	"cleanup":         with(requestShape, "sql"),
	"cleanup.sql":     sqlShape,
	"profile": {"base", "mismatch_status", "in_flight", "in_flight_status", "missing_key_status", "empty_key_status",
		"long_key_status", "max_key_length", "key_forms", "replay_header", "error_policy", "expired", "expired_status", "ignore",
		"operation_scope", "operation_reuse_status", "replay_returns"},
	"profile.ignore":             {"json_paths", "headers"},
	"hooks":                      {"fail_next", "slow", "hold_publish"},
	"hooks.fail_next":            requestShape,
	"hooks.slow":                 {"headers"},
	"hooks.hold_publish":         {"hold", "held", "release"},
	"hooks.hold_publish.hold":    requestShape,
	"hooks.hold_publish.held":    httpObserverShape,
	"hooks.hold_publish.release": requestShape,

	"operations[]": {"name", "method", "path", "headers", "body_format", "body", "variant_body", "key", "observer", "fingerprint_ignore", "publishes",
		"async", "resource"},
	"operations[].key":                 {"in", "name", "form", "format"},
	"operations[].observer":            with(observerShape, "bulk"),
	"operations[].observer.http":       httpObserverShape,
	"operations[].observer.sql":        sqlShape,
	"operations[].observer.bulk":       sqlShape,
	"operations[].async":               {"reference", "state", "poll", "settle"},
	"operations[].async.reference":     {"header", "jsonpath", "path"},
	"operations[].async.state":         {"jsonpath", "done", "failed"},
	"operations[].resource":            {"path", "id"},
	"operations[].publishes[]":         {"name", "amqp", "nats", "webhook", "id", "ref", "record", "within", "outage", "grace", "ignore"},
	"operations[].publishes[].amqp":    amqpShape,
	"operations[].publishes[].nats":    natsShape,
	"operations[].publishes[].webhook": {"listen", "path"},
	"operations[].publishes[].id":      {"jsonpath", "header", "message_id"},
	"operations[].publishes[].ref":     {"jsonpath"},
	"operations[].publishes[].record":  {"jsonpath", "answer"},

	"consumers[]": {"name", "transport", "method", "path", "headers", "amqp", "nats", "event", "signing", "effects", "state",
		"dedupe_retention", "lock_timeout", "redelivery_after", "hooks", "operation_dedupe"},
	"consumers[].amqp":             with(amqpShape, "queue"),
	"consumers[].nats":             with(natsShape, "durable", "create_durable"),
	"consumers[].event":            {"body", "type", "id", "operation", "operations"},
	"consumers[].event.id":         {"transport", "header", "jsonpath"},
	"consumers[].event.operation":  {"header", "jsonpath"},
	"consumers[].event.operations": {"jsonpath"},
	"consumers[].signing":          {"scheme", "secret", "tolerance", "hmac"},
	"consumers[].signing.hmac":     {"header", "template", "encoding", "prefix", "timestamp_header", "id_header"},
	"consumers[].effects":          observerShape,
	"consumers[].effects.http":     httpObserverShape,
	"consumers[].effects.sql":      sqlShape,
	"consumers[].state":            observerShape,
	"consumers[].state.http":       httpObserverShape,
	"consumers[].state.sql":        sqlShape,
	"consumers[].hooks":            {"fail_next", "disarm", "slow"},
	"consumers[].hooks.fail_next":  {"when", "method", "path", "query", "headers", "body", "body_format", "message_headers"},
	"consumers[].hooks.disarm":     requestShape,
	"consumers[].hooks.slow":       {"headers", "message_headers", "env"},

	"clients[]": {"name", "command", "env", "dir", "https", "timeout", "failure", "outcome", "ops", "errors", "operations", "retry",
		"configurations"},
	"clients[].failure":                                    reportShape,
	"clients[].outcome":                                    {"ok", "failed", "pending"},
	"clients[].outcome.ok":                                 reportShape,
	"clients[].outcome.failed":                             reportShape,
	"clients[].outcome.pending":                            reportShape,
	"clients[].ops":                                        {"params", "same_ref"},
	"clients[].ops.same_ref":                               {"params", "env"},
	"clients[].errors.<status>":                            errorShape,
	"clients[].operations[]":                               {"name", "method", "path", "key", "body_format", "identity", "response", "errors"},
	"clients[].operations[].key":                           {"in", "name"},
	"clients[].operations[].response":                      {"status", "body", "headers"},
	"clients[].operations[].errors.<status>":               errorShape,
	"clients[].retry":                                      retryShape,
	"clients[].retry.backoff":                              backoffShape,
	"clients[].retry.backoff.jitter":                       jitterShape,
	"clients[].retry.retries[]":                            retryWhenShape,
	"clients[].retry.retries[].when":                       whenShape,
	"clients[].retry.should_retry_header":                  shouldRetryShape,
	"clients[].configurations[]":                           {"name", "env", "retry"},
	"clients[].configurations[].retry":                     retryShape,
	"clients[].configurations[].retry.backoff":             backoffShape,
	"clients[].configurations[].retry.backoff.jitter":      jitterShape,
	"clients[].configurations[].retry.retries[]":           retryWhenShape,
	"clients[].configurations[].retry.retries[].when":      whenShape,
	"clients[].configurations[].retry.should_retry_header": shouldRetryShape,

	"(chain file)":   {"name", "chain"},
	"chain":          chainParts,
	"chain.client":   partRefShape,
	"chain.api":      partRefShape,
	"chain.consumer": partRefShape,
}

// The shapes that several objects share.
var (
	requestShape      = []string{"method", "path", "query", "headers", "body", "body_format"}
	httpObserverShape = []string{"method", "path", "query", "headers", "jsonpath"}
	sqlShape          = []string{"driver", "dsn", "query"}
	observerShape     = []string{"http", "sql", "per_tenant"}
	amqpShape         = []string{"url", "exchange", "routing_key", "create", "delete", "exchange_durable", "exchange_auto_delete"}
	natsShape         = []string{"url", "stream", "subject", "create", "delete"}
	errorShape        = []string{"body", "content_type", "headers"}
	retryShape        = []string{"max_attempts", "attempt_timeout", "retries", "never", "honors_retry_after", "backoff",
		"persists_keys", "transport_resends", "should_retry_header"}
	backoffShape     = []string{"initial", "multiplier", "max", "jitter"}
	jitterShape      = []string{"min", "max"}
	retryWhenShape   = []string{"status", "when"}
	whenShape        = []string{"jsonpath", "equals"}
	shouldRetryShape = []string{"name", "retry", "never"}
	partRefShape     = []string{"file", "env"}
	reportShape      = []string{"exit_code", "output"} // how a client reports an outcome
)

// with returns shape followed by more, a new list.
func with(shape []string, more ...string) []string {
	return append(slices.Clone(shape), more...)
}

// fieldsOf returns the fields the loader accepts in the object named schema. An object missing
// from the registry is a bug of the loader, not of the file: it panics.
func fieldsOf(schema string) []string {
	known, ok := registry[schema]
	if !ok {
		panic("targets: object " + schema + " is not in the registry of fields (targets/fields.go)")
	}
	return known
}

// subObject names, in the registry, the object in field name of the object named schema.
func subObject(schema, name string) string {
	if schema == "." || strings.HasPrefix(schema, "(") {
		return name
	}
	return schema + "." + name
}

// registryKeys returns the registry's object names, sorted.
func registryKeys() []string { return slices.Sorted(maps.Keys(registry)) }
