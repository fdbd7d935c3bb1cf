package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	amqp "github.com/rabbitmq/amqp091-go"
)

// deleteTimeout bounds what DeleteOnExit does at the end.
const deleteTimeout = 3 * time.Second

// deleteOnExit deletes the queue (AMQP) or the stream (NATS) over a fresh connection, once Run's
// context has ended: a consumer that cleans up after itself on SIGTERM, which can only do so
// while its broker link is still up.
func (c *consumer) deleteOnExit() {
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	var err error
	what := ""
	switch c.opts.Broker {
	case AMQP:
		what = fmt.Sprintf("queue %q", c.opts.Queue)
		err = c.deleteAMQPQueue()
	default:
		what = fmt.Sprintf("stream %q", c.opts.Stream)
		err = c.deleteNATSStream(ctx)
	}
	if err != nil {
		c.opts.Logf("%s: on exit, could not delete %s: %v", c.opts.Broker, what, err)
		return
	}
	c.opts.Logf("%s: on exit, deleted %s", c.opts.Broker, what)
}

func (c *consumer) deleteAMQPQueue() error {
	conn, err := amqp.DialConfig(c.opts.URL, amqp.Config{Dial: amqp.DefaultDial(deleteTimeout)})
	if err != nil {
		return err
	}
	defer conn.CloseDeadline(time.Now().Add(amqpCloseTimeout))
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	_, err = ch.QueueDelete(c.opts.Queue, false, false, false)
	return err
}

func (c *consumer) deleteNATSStream(ctx context.Context) error {
	nc, err := c.natsConnect()
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	return js.DeleteStream(ctx, c.opts.Stream)
}
