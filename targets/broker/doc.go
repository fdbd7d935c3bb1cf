// Package broker is the harness side of the queue-consumer tests: the harness is the publisher.
//
// A run gets its own topology under a unique name (UniqueName): on RabbitMQ a durable direct
// exchange bound to a durable queue (AMQPTopology), on NATS a JetStream stream with one subject
// and a short duplicates window, plus the durable consumer the consumer under test binds to
// (JetStreamTopology). Setup creates it, Teardown deletes it, and an Inventory taken before and
// after a run proves that nothing was left behind on the brokers.
//
// A Publisher puts one message on the broker and returns once the broker has taken
// responsibility for it (a publisher confirm on AMQP, the stream's ack on JetStream). The
// message id travels where each broker expects it: the AMQP message_id property, or the
// Nats-Msg-Id header. JetStream also drops a message whose Nats-Msg-Id it saw within the
// stream's duplicates window; the Receipt says so, so that a test can tell a message the broker
// dropped from one the consumer lost.
//
// Outcomes follow the harness's rule: an error wrapping ErrNotPublished means the broker did not
// take the message; any other error (a timeout, a connection lost before the confirm) leaves it
// unknown, and the message may yet reach the consumer.
package broker
