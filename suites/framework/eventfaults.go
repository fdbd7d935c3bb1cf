package framework

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets"
)

// The faults of the events an API publishes: its link to where they go (a fault proxy the
// lifecycle reaches them through, {{.EventsBroker}}), cut or with its return direction cut, and
// the target's hold before publish (hooks.hold_publish).

// linkEvents puts a fault proxy in front of where the first declared event goes (its broker, or
// the harness's receiver) and returns its address; every event published to the same address
// goes through it.
func (f *Faults) linkEvents(k *eventKit) (string, error) {
	for _, w := range k.watches {
		to, err := publishAddr(w.p, k)
		if err != nil {
			return "", fmt.Errorf("operation %s, event %s: %w", w.op.Name, w.p.Name, err)
		}
		w.to = to
	}
	n, err := f.net()
	if err != nil {
		return "", err
	}
	k.linkTo = k.watches[0].to
	if k.link, err = n.Proxy("events-broker", k.linkTo); err != nil {
		return "", fmt.Errorf("the API's events link: %w", err)
	}
	return k.link.Listen(), nil
}

// publishAddr is the host:port the API publishes p to: its broker's, or the receiver's.
func publishAddr(p *targets.Publish, k *eventKit) (string, error) {
	switch {
	case p.AMQP != nil:
		return hostPort(p.AMQP.URL, targets.TransportAMQP)
	case p.NATS != nil:
		return hostPort(p.NATS.URL, targets.TransportNATS)
	}
	return strings.TrimPrefix(k.receiver.URL(), "http://"), nil
}

// EventsLink returns the fault proxy between the API and where event p goes, nil when the API
// does not reach it through {{.EventsBroker}} (the lifecycle does not use it, or it leads
// elsewhere: EventsLinkSkip says why).
func (f *Faults) EventsLink(p *targets.Publish) *faults.Proxy {
	k := f.events
	if w := k.watch(p); w != nil && k.link != nil && w.to == k.linkTo {
		return k.link
	}
	return nil
}

// EventsLinkSkip says why the harness cannot cut the API's link to where event p goes, or "".
func (f *Faults) EventsLinkSkip(p *targets.Publish) string {
	k := f.events
	w := k.watch(p)
	switch {
	case f.Cluster == nil:
		return "the target declares no lifecycle: the harness cannot put a fault proxy between the API and where its events go"
	case k == nil || k.link == nil:
		return "the lifecycle does not reach where the events go through {{.EventsBroker}}: the harness cannot cut the API's link"
	case w == nil:
		return "the harness does not observe event " + p.Name
	case w.to != k.linkTo:
		return fmt.Sprintf("event %s goes to %s, and {{.EventsBroker}} leads to %s (the first declared event's)", p.Name, w.to, k.linkTo)
	}
	return ""
}

// CutEventsLink returns the fault that cuts the API's link to where p goes: the proxy drops what
// the API sends from then on and closes each connection a millisecond after it fell silent, so
// that the broker sees the publisher gone; a reconnection is accepted and closed at once, until
// healed. The proxy keeps listening (see the consumer side's cut).
func (f *Faults) CutEventsLink(p *targets.Publish) faults.Fault {
	l := f.EventsLink(p)
	drop := l.Timeout(time.Millisecond, faults.Upstream)
	return faults.Func(faults.KindCutBrokerLink, l.Name(),
		l.Name()+": cut the API's events link (what it publishes dropped, its connections closed)", drop.Inject, drop.Heal)
}

// LoseEventConfirms returns the fault that cuts the return direction of the API's link to where
// p goes: what it publishes reaches the broker (or the receiver), the publisher confirm (the
// JetStream ack, the webhook's answer) is dropped. Healing closes the connections it silenced,
// so that a publisher still waiting for its confirm learns that it lost the link.
func (f *Faults) LoseEventConfirms(p *targets.Publish) faults.Fault {
	l := f.EventsLink(p)
	silence := l.Timeout(0, faults.Downstream)
	return faults.Func(faults.KindLoseConfirm, l.Name(),
		l.Name()+": cut the return direction of the API's events link (publications arrive, their confirms are lost)", silence.Inject, silence.Heal)
}

// HoldPublications returns the target's hold_publish hook as a fault: injecting it sends the
// hold request to every instance (as tenant tn), whose publications then wait before they
// publish; healing sends the release request to every instance running, where one is declared
// (otherwise only an instance's end ends its hold: a kill, a restart).
func (f *Faults) HoldPublications(tn *targets.Tenant) faults.Fault {
	type send func(context.Context, *http.Client, *targets.Instance, *targets.Tenant) error
	each := func(fn send, running bool) func(context.Context) error {
		return func(ctx context.Context) error {
			hc := f.t.ObserverClient(10*time.Second, 0)
			defer hc.CloseIdleConnections()
			for i := range f.t.Instances {
				if running && f.Cluster != nil && !f.Cluster.Running(i) {
					continue
				}
				if err := fn(ctx, hc, &f.t.Instances[i], tn); err != nil {
					return fmt.Errorf("instance %d: %w", i, err)
				}
			}
			return nil
		}
	}
	return faults.Func(faults.KindHoldPublish, "every instance", "hold_publish hook on every instance (publications held before they publish)",
		each(f.t.SendHoldPublish, false), each(f.t.SendReleasePublish, true))
}

// PublicationsHeld asks instance i how many publications it holds now (hold_publish.held).
func (f *Faults) PublicationsHeld(ctx context.Context, i int, tn *targets.Tenant) (int, error) {
	hc := f.t.ObserverClient(5*time.Second, 0)
	defer hc.CloseIdleConnections()
	return f.t.HeldPublications(ctx, hc, &f.t.Instances[i], tn)
}

// PassEventsOn makes the harness's receiver pass every webhook delivery of the API's events on
// to url (a chain's consumer) and answer the API as the consumer answered (faults.EventReceiver
// PassOn): the API's webhook then reaches the consumer, the harness observing it on the way.
func (f *Faults) PassEventsOn(p *targets.Publish, url string) error {
	k := f.events
	if k == nil || k.receiver == nil || p.Webhook == nil {
		return fmt.Errorf("event %s is not delivered to the harness's webhook receiver", p.Name)
	}
	for _, w := range k.watches {
		if w.p.Webhook != nil {
			w.mu.Lock()
			w.accepted = map[string]bool{}
			w.mu.Unlock()
		}
	}
	k.receiver.PassOn(url, k.answered)
	return nil
}
