package consumer

import (
	"context"

	"github.com/retrysafe/retrysafe/targets/reference/queue"
)

// QueueHandler hands each message of a queue transport to the consumer and turns its outcome
// into the transport's decision: acknowledged once processed or a duplicate; redelivered later
// while another delivery holds the event or its effect failed; dropped when it is not an event
// at all.
func (c *Consumer) QueueHandler() queue.Handler {
	return func(ctx context.Context, m queue.Message) queue.Decision {
		out := c.Deliver(ctx, Delivery{ID: m.ID, Body: m.Body})
		switch {
		case out.Ack():
			return queue.Ack
		case out.Retry():
			return queue.Retry
		}
		return queue.Drop
	}
}
