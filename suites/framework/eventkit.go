package framework

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/history"
)

// eventKit is what the harness holds for the events the target's operations publish (their
// publishes blocks): what it created on the brokers, an observer per event that takes nothing
// from the API's own consumers (a queue of its own bound to the exchange, an ordered JetStream
// consumer, its webhook receiver), and every event they saw. Each observed event is an entry of
// the run's history (history.MethodEvent); those seen before the history exists wait for it.
type eventKit struct {
	label    string // labels the names of what it makes on the brokers
	receiver *faults.EventReceiver
	watches  []*eventWatch
	// link is the fault proxy between the API and where its first event goes ({{.EventsBroker}}),
	// nil when the lifecycle does not use it; linkTo is its upstream.
	link   *faults.Proxy
	linkTo string

	mu      sync.Mutex
	hist    *history.History
	pending []pendingEvent
}

// eventWatch is the observation of one declared event.
type eventWatch struct {
	op      *targets.Operation
	p       *targets.Publish
	obs     broker.Observer
	doomed  broker.Topology // deleted at the end: what the harness created, or what delete: true names
	refused string          // why it cannot be observed (its specs skip with this reason)
	to      string          // the host:port the API publishes it to (its broker's, or the receiver's)

	mu       sync.Mutex
	seen     []check.Event
	accepted map[string]bool // the ids the consumer accepted, when the receiver passes them on (else nil)
}

// pendingEvent is an event observed before the history existed.
type pendingEvent struct {
	w   *eventWatch
	ev  check.Event
	att history.Attempt
}

// setUpEvents prepares the observation of every declared event: it creates what the target
// file asks the harness to create on the brokers, starts the webhook receiver and, when the
// lifecycle uses {{.EventsBroker}}, the fault proxy in front of where the first event goes. It
// returns the receiver's URL for {{.EventsURL}} ("" when no event is a webhook) and the proxy's
// address for {{.EventsBroker}} ("" when none). The broker observers start once the target's
// processes run (observeEvents): an API may declare its own exchange.
func (f *Faults) setUpEvents(ctx context.Context, t *targets.Target, label string) (eventsURL, eventsBroker string, err error) {
	k := &eventKit{label: label}
	f.events = k
	path := ""
	for _, op := range t.Operations {
		for _, p := range op.Publishes {
			w := &eventWatch{op: op, p: p}
			k.watches = append(k.watches, w)
			if err := w.setUpTopology(ctx); err != nil {
				if located := exchangeRefused(t, p.AMQP, err); located != err {
					return "", "", located
				}
				return "", "", fmt.Errorf("operation %s, event %s: %w", op.Name, p.Name, err)
			}
			if p.Webhook != nil && k.receiver == nil {
				r, err := faults.NewEventReceiver(p.Webhook.Listen, k.received)
				if err != nil {
					return "", "", err
				}
				k.receiver, path = r, p.Webhook.Path
			}
		}
	}
	if k.receiver != nil {
		if path == "" {
			path = DefaultEventsPath
		}
		eventsURL = k.receiver.URL() + path
	}
	if !t.Lifecycle.UsesEventsBroker() || len(k.watches) == 0 {
		return eventsURL, "", nil
	}
	if eventsBroker, err = f.linkEvents(k); err != nil {
		return "", "", err
	}
	return eventsURL, eventsBroker, nil
}

// DefaultEventsPath is the path of {{.EventsURL}} when the first webhook event declares none.
const DefaultEventsPath = "/events"

// setUpTopology creates the event's exchange or stream when the target file asks the harness
// to, and names what it deletes at the end.
func (w *eventWatch) setUpTopology(ctx context.Context) error {
	var t broker.Topology
	var create, del bool
	switch {
	case w.p.AMQP != nil:
		ex, err := broker.NewAMQPExchange(w.p.AMQP.URL, w.p.AMQP.Exchange)
		if err != nil {
			return err
		}
		ex.Durable, ex.AutoDelete = w.p.AMQP.ExchangeDurable, w.p.AMQP.ExchangeAutoDelete
		t, create, del = ex, w.p.AMQP.Create, w.p.AMQP.Delete
	case w.p.NATS != nil:
		js, err := broker.NewJetStreamTopology("named", broker.WithNATSURL(w.p.NATS.URL))
		if err != nil {
			return err
		}
		js.Stream, js.Subject, js.Durable = w.p.NATS.Stream, w.p.NATS.Subject, ""
		t, create, del = js, w.p.NATS.Create, w.p.NATS.Delete
	default:
		return nil
	}
	if create || del {
		w.doomed = t
	}
	if !create {
		return nil
	}
	if err := t.Setup(ctx); err != nil {
		return fmt.Errorf("create %s: %w", w.where(), err)
	}
	return nil
}

// where names what the event is published on.
func (w *eventWatch) where() string {
	switch {
	case w.p.AMQP != nil:
		return "exchange " + w.p.AMQP.Exchange
	case w.p.NATS != nil:
		return "stream " + w.p.NATS.Stream
	}
	return "the webhook receiver"
}

// observeEvents starts an observer per broker event, waiting at most topologyWait for an
// exchange or stream the API creates itself. A WorkQueue stream is not observed: its events'
// specs skip, saying why.
func (f *Faults) observeEvents(ctx context.Context) error {
	k := f.events
	for _, w := range k.watches {
		if w.p.Webhook != nil {
			continue
		}
		deadline := time.Now().Add(topologyWait)
		for {
			err := w.observe(ctx, k)
			switch {
			case err == nil:
			case errors.Is(err, broker.ErrWorkQueue):
				w.refused = err.Error()
			case time.Now().Before(deadline) && ctx.Err() == nil:
				time.Sleep(100 * time.Millisecond)
				continue
			default:
				return fmt.Errorf("operation %s, event %s: observe %s: %w", w.op.Name, w.p.Name, w.where(), err)
			}
			break
		}
	}
	return nil
}

// observe starts the event's observer.
func (w *eventWatch) observe(ctx context.Context, k *eventKit) error {
	handle := func(o broker.Observed) {
		h := http.Header{}
		for name, v := range o.Headers {
			h.Set(name, v)
		}
		k.record(w, targets.EventMessage{Body: o.Body, Header: h, MessageID: o.MessageID}, o.At, "message id "+o.MessageID)
	}
	var err error
	if a := w.p.AMQP; a != nil {
		w.obs, err = broker.ObserveAMQP(ctx, a.URL, a.Exchange, a.RoutingKey, broker.UniqueName(k.label), handle)
	} else {
		w.obs, err = broker.ObserveJetStream(ctx, w.p.NATS.URL, w.p.NATS.Stream, w.p.NATS.Subject, handle)
	}
	return err
}

// received routes a webhook delivery to the event declared on its path (or on any path).
func (k *eventKit) received(r faults.Received) {
	if w := k.webhookWatch(r.Path); w != nil {
		k.record(w, targets.EventMessage{Body: r.Body, Header: r.Header}, r.At, "POST "+r.Path)
	}
}

// webhookWatch returns the webhook event declared on path, or else on any path; nil for none.
func (k *eventKit) webhookWatch(path string) *eventWatch {
	var any *eventWatch
	for _, w := range k.watches {
		switch {
		case w.p.Webhook == nil:
		case w.p.Webhook.Path == path:
			return w
		case w.p.Webhook.Path == "" && any == nil:
			any = w
		}
	}
	return any
}

// answered keeps which events the consumer accepted (answered 2xx) when the receiver passes the
// deliveries on.
func (k *eventKit) answered(r faults.Received, status int) {
	w := k.webhookWatch(r.Path)
	if w == nil || status/100 != 2 {
		return
	}
	id, err := w.p.EventID(targets.EventMessage{Body: r.Body, Header: r.Header})
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.accepted[id] = true
}

// record reads an observed event's id and tie and keeps it, as an entry of the history.
func (k *eventKit) record(w *eventWatch, m targets.EventMessage, at time.Time, how string) {
	ev := check.Event{At: at, Body: m.Body}
	var errs []error
	var err error
	if ev.ID, err = w.p.EventID(m); err != nil {
		errs = append(errs, fmt.Errorf("its id: %w", err))
	}
	if ev.Tie, err = w.p.TieOf(m); err != nil {
		errs = append(errs, fmt.Errorf("what it names of its operation: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		ev.Err = err.Error()
	}
	att := history.Attempt{Op: w.op.Name, Key: ev.ID, Method: history.MethodEvent, URL: w.p.Destination(), ReqHeader: m.Header,
		ReqBody: m.Body, Start: at, End: at, Outcome: history.OK, Note: fmt.Sprintf("event %s observed (%s)", w.p.Name, how)}
	if ev.Err != "" {
		att.Err = ev.Err
	}
	k.mu.Lock()
	h := k.hist
	if h == nil {
		k.pending = append(k.pending, pendingEvent{w, ev, att})
	}
	k.mu.Unlock()
	if h != nil {
		w.keep(h, ev, att)
	}
}

// keep records the event in the history and keeps it with its entry's number.
func (w *eventWatch) keep(h *history.History, ev check.Event, att history.Attempt) {
	ev.Seq = h.Add(att).Seq
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, ev)
}

// attach makes the kit record into h, the events seen so far first.
func (k *eventKit) attach(h *history.History) {
	k.mu.Lock()
	pending := k.pending
	k.pending, k.hist = nil, h
	k.mu.Unlock()
	for _, p := range pending {
		p.w.keep(h, p.ev, p.att)
	}
}

// close stops the observers and the receiver and deletes what the harness created.
func (k *eventKit) close() error {
	if k == nil {
		return nil
	}
	var errs []error
	for _, w := range k.watches {
		if w.obs != nil {
			errs = append(errs, w.obs.Close())
		}
	}
	if k.receiver != nil {
		errs = append(errs, k.receiver.Close())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, w := range k.watches {
		if w.doomed != nil {
			errs = append(errs, w.doomed.Teardown(ctx))
		}
	}
	return errors.Join(errs...)
}

// watch returns the observation of one declared event.
func (k *eventKit) watch(p *targets.Publish) *eventWatch {
	if k == nil {
		return nil
	}
	i := slices.IndexFunc(k.watches, func(w *eventWatch) bool { return w.p == p })
	if i < 0 {
		return nil
	}
	return k.watches[i]
}

// EventsSeen returns the events of p observed at since or later, in the order observed.
func (e *Env) EventsSeen(p *targets.Publish, since time.Time) []check.Event {
	w := e.Faults.events.watch(p)
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []check.Event
	for _, ev := range w.seen {
		if !ev.At.Before(since) {
			out = append(out, ev)
		}
	}
	return out
}

// EventsUnseen says why the events of p cannot be (or could not all be) observed: a WorkQueue
// stream, an observer that stopped. "" = they are.
func (e *Env) EventsUnseen(p *targets.Publish) string {
	w := e.Faults.events.watch(p)
	switch {
	case w == nil:
		return "the harness does not observe event " + p.Name
	case w.refused != "":
		return w.refused
	case w.obs != nil && w.obs.Lost() != nil:
		return fmt.Sprintf("the harness's observer of %s stopped: %v", w.where(), w.obs.Lost())
	}
	return ""
}

// EventUnaccepted reports whether the receiver passes the deliveries of webhook event p on
// (PassEventsOn) and the consumer accepted (answered 2xx) none of those of event id.
func (e *Env) EventUnaccepted(p *targets.Publish, id string) bool {
	w := e.Faults.events.watch(p)
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.accepted != nil && !w.accepted[id]
}
