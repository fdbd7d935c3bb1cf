package framework

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// exchangeRefused turns RabbitMQ's refusal of the harness's declaration of an exchange
// (create: true) that exists with other settings (PRECONDITION_FAILED, whose text names the
// received and the current values) into a located start-up error at the amqp block of the
// target file: FILE:LINE: field: message. Any other error (a queue's refusal too: the exchange's
// settings cannot mend it) is returned as it is.
func exchangeRefused(t *targets.Target, b *targets.AMQPBinding, err error) error {
	reason, ok := broker.ExchangeRefused(err)
	if !ok || b == nil {
		return err
	}
	return b.ExchangeError(t.Path, fmt.Errorf("exchange %q exists with other settings than the harness declares it with "+
		"(exchange_durable: %v, exchange_auto_delete: %v), and RabbitMQ answered %q: declare the settings it has (as the app declares it), or delete it",
		b.Exchange, b.ExchangeDurable, b.ExchangeAutoDelete, reason))
}
