package consumer

import (
	"context"

	"github.com/retrysafe/retrysafe/targets/reference/queue"
)

// QueueHandler hands each message of a queue transport to the consumer and turns its outcome
// into the transport's decision: acknowledged once processed or a duplicate; redelivered later
// while another delivery holds the event or its effect failed; dropped when it is not an event
// at all (or carries no id where Config.IDFrom says it travels, or a bad slow-hook delay).
func (c *Consumer) QueueHandler() queue.Handler {
	return func(ctx context.Context, m queue.Message) queue.Decision {
		d, err := c.queueDelivery(m)
		if err != nil {
			c.cfg.Logger.Printf("message %q: %v: dropped", m.ID, err)
			return queue.Drop
		}
		out := c.Deliver(ctx, d)
		switch {
		case out.Ack():
			return queue.Ack
		case out.Retry():
			return queue.Retry
		}
		return queue.Drop
	}
}

// queueDelivery reads a message as a delivery: the event id where Config.IDFrom says (the
// message id by default), the body, and the slow hook's delay from the message's headers.
func (c *Consumer) queueDelivery(m queue.Message) (Delivery, error) {
	header := func(name string) string { return m.Header(name) }
	d := Delivery{Body: m.Body, Operation: c.operationHeader(header)}
	switch c.cfg.IDFrom.In {
	case IDInDefault, IDInTransport:
		d.ID = m.ID
	case IDInHeader:
		if d.ID = header(c.cfg.IDFrom.Header); d.ID == "" {
			return d, errNoID
		}
	}
	var err error
	d.Delay, err = c.delayOf(header)
	if c.hooks.on {
		d.Fail, d.Redelivered = header(FailHeader), m.Redelivered
	}
	return d, err
}
