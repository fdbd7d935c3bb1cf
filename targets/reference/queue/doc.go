// Package queue is the broker side of the reference queue consumer: it consumes a RabbitMQ
// queue or a NATS JetStream durable consumer, hands each message to a Handler, and settles the
// message the way the Handler decides.
//
// The transports keep at-least-once delivery honest: a message is acknowledged only after the
// Handler returned Ack, so a crash (or a cut link, or Run's context ending) before that leaves
// it unacknowledged and the broker delivers it again. An acknowledgement that cannot reach the
// broker because the link is down is lost, not retried: the broker redelivers the message and
// the Handler must recognise it by its id. Options.AckFirst is the deliberately broken mode
// (the ack-before-effect mutant) that acknowledges each message before calling the Handler.
//
// Run reconnects for as long as its context lasts, with a bounded backoff, and resumes
// consuming; several processes running Run on one queue or durable consumer share its
// messages.
package queue
