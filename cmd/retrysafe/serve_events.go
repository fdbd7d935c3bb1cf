package main

import (
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/spf13/cobra"
)

// eventsFlags are the flags of `retrysafe serve --events`.
type eventsFlags struct {
	target reference.EventsTarget
}

// addEventsFlags adds the flags of the API's events to serve.
func addEventsFlags(cmd *cobra.Command) *eventsFlags {
	e := &eventsFlags{}
	f := cmd.Flags()
	f.StringVar(&e.target.Transport, "events", "", "publish an order.created event for every new order through a transactional outbox: amqp, nats or webhook")
	f.StringVar(&e.target.URL, "events-url", "", "where the events go: the broker (default "+broker.DefaultAMQPURL+" or "+broker.DefaultNATSURL+
		"), or the webhook's URL (required with --events webhook)")
	f.StringVar(&e.target.Exchange, "events-exchange", reference.DefaultEventsExchange, "the exchange the events are published to (amqp)")
	f.StringVar(&e.target.Key, "events-routing-key", reference.DefaultEventsKey, "the routing key of the events (amqp)")
	f.StringVar(&e.target.Stream, "events-stream", reference.DefaultEventsStream, "the stream the events must be stored in (nats; empty: any)")
	f.StringVar(&e.target.Subject, "events-subject", reference.DefaultEventsSubject, "the subject of the events (nats)")
	return e
}

// publisher opens the events' publisher; nil without --events.
func (e *eventsFlags) publisher() (reference.EventPublisher, error) {
	t := e.target
	if t.Transport == "" {
		return nil, nil
	}
	if t.URL == "" {
		switch t.Transport {
		case reference.EventsAMQP:
			t.URL = broker.DefaultAMQPURL
		case reference.EventsNATS:
			t.URL = broker.DefaultNATSURL
		}
	}
	return reference.OpenEventPublisher(t)
}
