package main

import (
	"fmt"
	"os"

	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/retrysafe/retrysafe/targets/webhook"
	"github.com/spf13/cobra"
)

// eventsFlags are the flags of `retrysafe serve --events`.
type eventsFlags struct {
	target          reference.EventsTarget
	signing, secret string
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
	f.StringVar(&e.signing, "events-signing", "none", "sign each webhook delivery (webhook): none, standard-webhooks, stripe, github (the event's id as the signed id)")
	f.StringVar(&e.secret, "events-secret", "", "the webhooks' signing secret (default $"+EnvWebhookSecret+")")
	f.BoolVar(&e.target.ChannelPerPublish, "events-channel-per-publish", false,
		"open a channel for each publication (amqp), as some libraries do by default: a publication waits for the broker's answer before it sends")
	return e
}

// publisher opens the events' publisher; nil without --events.
func (e *eventsFlags) publisher() (reference.EventPublisher, error) {
	t := e.target
	if t.Transport == "" {
		return nil, nil
	}
	scheme, err := webhook.ParseScheme(e.signing)
	if err != nil {
		return nil, fmt.Errorf("--events-signing: %w", err)
	}
	if scheme != webhook.SchemeNone {
		if t.Transport != reference.EventsWebhook {
			return nil, fmt.Errorf("--events-signing: only webhook deliveries are signed (not %s)", t.Transport)
		}
		secret := e.secret
		if secret == "" {
			secret = os.Getenv(EnvWebhookSecret)
		}
		if secret == "" {
			return nil, fmt.Errorf("--events-signing %s: no secret (--events-secret or $%s)", scheme, EnvWebhookSecret)
		}
		if t.WebhookSigner, err = webhook.New(webhook.Config{Scheme: scheme, Secret: secret}); err != nil {
			return nil, fmt.Errorf("--events-signing: %w", err)
		}
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
