// Package examples embeds the example target files, so that the retrysafe binary can test
// its own reference API without any file on disk.
package examples

import _ "embed"

// Reference is targets/examples/reference.yaml: the reference API at ${RETRYSAFE_URL}.
//
//go:embed reference.yaml
var Reference []byte

// ReferenceManaged is targets/examples/reference-managed.yaml: the reference API started by
// the harness through a lifecycle, bound to the harness's downstream sink.
//
//go:embed reference-managed.yaml
var ReferenceManaged []byte

// ReferenceUUID is targets/examples/reference-uuid.yaml: the reference API started with
// `serve --key-format uuid`, whose keys must be UUIDs.
//
//go:embed reference-uuid.yaml
var ReferenceUUID []byte

// ReferenceNoAuth is targets/examples/reference-noauth.yaml: the reference API started with
// `serve --auth none`, whose tenant is the X-Tenant header.
//
//go:embed reference-noauth.yaml
var ReferenceNoAuth []byte

// ReferenceHooks is targets/examples/reference-hooks.yaml: the reference API started with
// `serve --hooks` and no downstream, failing and slowed through its test hooks.
//
//go:embed reference-hooks.yaml
var ReferenceHooks []byte

// ReferenceMismatch400 is targets/examples/reference-mismatch400.yaml: the reference API started
// with `serve --mismatch-status 400`, declared as `mismatch_status: 4xx`.
//
//go:embed reference-mismatch400.yaml
var ReferenceMismatch400 []byte

// ConsumerWebhookManaged is targets/examples/consumer-webhook-managed.yaml: the reference
// webhook consumer started by the harness through a lifecycle.
//
//go:embed consumer-webhook-managed.yaml
var ConsumerWebhookManaged []byte

// ConsumerAMQPManaged is targets/examples/consumer-amqp-managed.yaml: the reference queue
// consumer on RabbitMQ, two instances on one queue, started by the harness through a lifecycle
// that reaches the broker through the harness's fault proxy.
//
//go:embed consumer-amqp-managed.yaml
var ConsumerAMQPManaged []byte

// ConsumerNATSManaged is targets/examples/consumer-nats-managed.yaml: the reference queue
// consumer on NATS JetStream, two instances on one durable consumer, started by the harness
// through a lifecycle that reaches the broker through the harness's fault proxy.
//
//go:embed consumer-nats-managed.yaml
var ConsumerNATSManaged []byte

// ConsumerWebhookNoSinkManaged is targets/examples/consumer-webhook-nosink-managed.yaml: the
// reference webhook consumer without a downstream sink, with its test hooks (the self-test's
// no-sink shape).
//
//go:embed consumer-webhook-nosink-managed.yaml
var ConsumerWebhookNoSinkManaged []byte

// ConsumerAMQPNoSinkManaged is targets/examples/consumer-amqp-nosink-managed.yaml: the reference
// queue consumer on RabbitMQ without a downstream sink, with its test hooks.
//
//go:embed consumer-amqp-nosink-managed.yaml
var ConsumerAMQPNoSinkManaged []byte

// ConsumerNATSNoSinkManaged is targets/examples/consumer-nats-nosink-managed.yaml: the reference
// queue consumer on NATS JetStream without a downstream sink, with its test hooks and the event
// id in a message header.
//
//go:embed consumer-nats-nosink-managed.yaml
var ConsumerNATSNoSinkManaged []byte

// ClientManaged is targets/examples/client-managed.yaml: the reference client (`retrysafe
// client`), started by the harness once per scenario against its scripted API.
//
//go:embed client-managed.yaml
var ClientManaged []byte

// ReferenceEventsAMQP is targets/examples/reference-events-amqp.yaml: the reference API started
// by the harness with `serve --events amqp`, its order.created events published to RabbitMQ
// through its outbox.
//
//go:embed reference-events-amqp.yaml
var ReferenceEventsAMQP []byte

// ReferenceEventsNATS is targets/examples/reference-events-nats.yaml: the reference API started
// by the harness with `serve --events nats`, its events published to NATS JetStream.
//
//go:embed reference-events-nats.yaml
var ReferenceEventsNATS []byte

// ReferenceEventsWebhook is targets/examples/reference-events-webhook.yaml: the reference API
// started by the harness with `serve --events webhook --hooks`, its events delivered to the
// harness's receiver ({{.EventsURL}}).
//
//go:embed reference-events-webhook.yaml
var ReferenceEventsWebhook []byte

// ChainClientManaged is targets/examples/chain-client-managed.yaml: the reference client as the
// client part of the reference chain (`retrysafe run --chain`), authenticated as the API's first
// tenant, its retries outlasting a restart of the API.
//
//go:embed chain-client-managed.yaml
var ChainClientManaged []byte

// ReferenceAsync is targets/examples/reference-async.yaml: the reference API started by the
// harness with `serve --async`: every POST answers 202 with its operation's reference and a
// worker makes the record later.
//
//go:embed reference-async.yaml
var ReferenceAsync []byte
