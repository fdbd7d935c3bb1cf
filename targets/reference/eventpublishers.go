package reference

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

// The transports the reference API publishes its events on (serve --events).
const (
	EventsAMQP    = "amqp"
	EventsNATS    = "nats"
	EventsWebhook = "webhook"
)

// EventsTarget says where the API's events go: the transport, and its URL (the broker's, or the
// webhook's endpoint), exchange and routing key (amqp), stream and subject (nats).
type EventsTarget struct {
	Transport       string
	URL             string
	Exchange, Key   string
	Stream, Subject string
	// WebhookTimeout bounds one webhook delivery (at least a second).
	WebhookTimeout time.Duration
	// WebhookSigner signs each webhook delivery under its scheme (Standard Webhooks: the
	// event's id in webhook-id), so that a consumer that verifies signatures takes it as it
	// comes; nil (or the none scheme) = unsigned.
	WebhookSigner *webhook.Signer
	// ChannelPerPublish opens an AMQP channel for each publication, as some libraries do by
	// default: a publication then waits for the broker's answer before it sends anything.
	ChannelPerPublish bool
}

// Default event destinations of `retrysafe serve --events`.
const (
	DefaultEventsExchange = "orders"
	DefaultEventsKey      = EventOrderCreated
	DefaultEventsStream   = "ORDERS"
	DefaultEventsSubject  = "orders.created"
)

// OpenEventPublisher returns the publisher of an events target. It connects on first use (and
// again after a failed publication), so that an API started while its broker is away still
// serves, its events pending.
func OpenEventPublisher(t EventsTarget) (EventPublisher, error) {
	switch t.Transport {
	case EventsWebhook:
		if !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "https://") {
			return nil, fmt.Errorf("events webhook URL %q: want http:// or https://", t.URL)
		}
		return &webhookPublisher{url: t.URL, hc: &http.Client{Timeout: max(t.WebhookTimeout, time.Second)}, signer: t.WebhookSigner}, nil
	case EventsAMQP:
		if t.Exchange == "" {
			return nil, fmt.Errorf("events on amqp need an exchange (the default exchange routes to one queue only)")
		}
		var opts []broker.Option
		if t.ChannelPerPublish {
			opts = append(opts, broker.WithChannelPerPublish())
		}
		return &brokerPublisher{open: func(ctx context.Context) (broker.Publisher, error) {
			return broker.NewAMQPPublisher(ctx, t.URL, t.Exchange, t.Key, opts...)
		}}, nil
	case EventsNATS:
		if t.Subject == "" {
			return nil, fmt.Errorf("events on nats need a subject")
		}
		return &brokerPublisher{open: func(ctx context.Context) (broker.Publisher, error) {
			return broker.NewJetStreamPublisher(ctx, t.URL, t.Subject, t.Stream)
		}}, nil
	}
	return nil, fmt.Errorf("unknown events transport %q (known: %s, %s, %s)", t.Transport, EventsAMQP, EventsNATS, EventsWebhook)
}

// brokerPublisher publishes through a broker publisher (targets/broker: publisher confirms on
// RabbitMQ, the stream's ack on JetStream, the message id the event's id), opened on first use
// and dropped after any failure, so that the next publication starts on a fresh link.
type brokerPublisher struct {
	open func(context.Context) (broker.Publisher, error)

	mu  sync.Mutex
	pub broker.Publisher
}

// Publish implements EventPublisher.
func (p *brokerPublisher) Publish(ctx context.Context, e OutboxEvent, payload []byte) error {
	p.mu.Lock()
	pub := p.pub
	if pub == nil {
		var err error
		if pub, err = p.open(ctx); err != nil {
			p.mu.Unlock()
			return err
		}
		p.pub = pub
	}
	p.mu.Unlock()
	_, err := pub.Publish(ctx, broker.Message{ID: e.ID, Body: payload, Headers: map[string]string{"event-type": e.Type}})
	if err != nil {
		p.mu.Lock()
		if p.pub == pub {
			p.pub = nil
			_ = pub.Close()
		}
		p.mu.Unlock()
	}
	return err
}

// Close implements EventPublisher.
func (p *brokerPublisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pub == nil {
		return nil
	}
	err := p.pub.Close()
	p.pub = nil
	return err
}

// webhookPublisher POSTs each event to one URL; a 2xx confirms it.
type webhookPublisher struct {
	url    string
	hc     *http.Client
	signer *webhook.Signer // nil: unsigned
}

// Publish implements EventPublisher: the payload as JSON, the event's id in Event-Id and its
// type in Event-Type, signed (when the publisher signs) at the time of this publication.
func (p *webhookPublisher) Publish(ctx context.Context, e OutboxEvent, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.GetBody = nil // a retry is the relay's, under the same id, never the transport's
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Event-Id", e.ID)
	req.Header.Set("Event-Type", e.Type)
	if p.signer != nil {
		signed, err := p.signer.Sign(e.ID, time.Now(), payload)
		if err != nil {
			return fmt.Errorf("sign the webhook: %w", err)
		}
		for name, vals := range signed {
			req.Header[name] = vals
		}
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyBytes))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered %d", resp.StatusCode)
	}
	return nil
}

// Close implements EventPublisher.
func (p *webhookPublisher) Close() error {
	p.hc.CloseIdleConnections()
	return nil
}
