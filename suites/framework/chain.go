package framework

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/retrysafe/retrysafe/faults"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The chain: three ordinary target parts under one harness. The chain's harness opens a harness
// for the API part and one for the consumer part, each with its own lifecycle and kits (the
// API's processes, its fault proxy and the observers of its events; the consumer's processes,
// topology and proxied broker link), exactly as a run against that part alone would; the client
// part's processes are started by the chain's property through Processes, as the client side's
// scenarios start theirs. The faults of every hop go through the chain's one nemesis, so that
// they are on one timeline, in the chain's history.

// ChainParts are the running parts of a chain target.
type ChainParts struct {
	// API is the API part's environment: its target, its instances' cluster and proxies, the
	// events it publishes as the harness observes them.
	API *Env
	// Consumer is the consumer part's environment: its target, cluster and broker link.
	Consumer *Env
	// Client is the client that drives the chain (the client part's first).
	Client *targets.Client
	// Chain is the chain's declaration.
	Chain *targets.Chain

	harnesses []*Harness    // closed newest first
	webhook   *faults.Proxy // the receiver's link to a webhook consumer (nil on a broker)
}

// Chain returns the running parts of a chain target; nil for any other target.
func (e *Env) Chain() *ChainParts { return e.chain }

// openChain opens the harnesses of a chain target's API and consumer parts (the API first: the
// exchange or stream its events go to exists before the consumer binds to it), with the chain's
// settings, so that every name the parts make is the run's.
func (h *Harness) openChain(ctx context.Context) (*ChainParts, error) {
	c := h.target.Chain
	if h.o.settings.RunID == "" {
		h.o.settings.RunID = NewRunID()
	}
	opts := []Option{WithSettings(h.o.settings), WithLog(h.o.log), AllowRemote(h.o.allowRemote), WithoutBaseline()}
	if h.o.processOutput != nil {
		opts = append(opts, WithProcessOutput(h.o.processOutput))
	}
	parts := &ChainParts{Chain: c, Client: c.Client.Clients[0]}
	for _, part := range []struct {
		name string
		t    *targets.Target
		env  **Env
	}{{"api", c.API, &parts.API}, {"consumer", c.Consumer, &parts.Consumer}} {
		ph, err := Open(ctx, part.t, opts...)
		if err != nil {
			parts.close()
			return nil, fmt.Errorf("chain.%s (%s): %w", part.name, part.t.Name, err)
		}
		parts.harnesses = append(parts.harnesses, ph)
		*part.env = ph.env
	}
	if err := parts.passEventsOn(); err != nil {
		parts.close()
		return nil, err
	}
	return parts, nil
}

// passEventsOn links a chain whose API delivers its events by webhook: the harness's receiver
// (where the API's part delivers them, observed) passes each delivery on to the consumer's first
// instance through a fault proxy of the consumer part's, the webhook's analogue of a queue
// consumer's broker link, and answers the API as the consumer answered, so that a delivery the
// consumer did not take is the API's to deliver again. A broker's chain needs nothing: the
// consumer reads the exchange or stream the API publishes to.
func (p *ChainParts) passEventsOn() error {
	_, pub := p.Chain.Published()
	if pub.Webhook == nil {
		return nil
	}
	c := p.Chain.EventConsumer()
	proxy, via, err := p.Consumer.Faults.ProxyFor(0)
	if err != nil {
		return fmt.Errorf("chain.consumer: the fault proxy in front of consumer %s: %w", c.Name, err)
	}
	if err := p.API.Faults.PassEventsOn(pub, via.URL.JoinPath(c.Path).String()); err != nil {
		return fmt.Errorf("chain.api: %w", err)
	}
	p.webhook = proxy
	return nil
}

// ConsumerLink returns the fault proxy through which the chain's events reach the consumer: a
// queue consumer's broker link ({{.Broker}}), or the link between the harness's receiver and a
// webhook consumer; nil when the harness proxies none.
func (p *ChainParts) ConsumerLink() *faults.Proxy {
	if p.webhook != nil {
		return p.webhook
	}
	return p.Consumer.Faults.BrokerLink(p.Chain.EventConsumer())
}

// close closes the parts' harnesses, the consumer's first.
func (p *ChainParts) close() error {
	if p == nil {
		return nil
	}
	var errs []error
	for i := len(p.harnesses) - 1; i >= 0; i-- {
		errs = append(errs, p.harnesses[i].Close())
	}
	p.harnesses = nil
	return errors.Join(errs...)
}

// chainRedactor redacts what any part of a chain marks secret.
func chainRedactor(c *targets.Chain) *history.Redactor {
	var secrets, headers, public []string
	for _, t := range []*targets.Target{c.Client, c.API, c.Consumer} {
		secrets = append(secrets, t.SecretValues()...)
		headers = append(headers, t.SecretHeaders()...)
		public = append(public, t.PublicValues()...)
	}
	r := history.NewRedactor(secrets, headers, signatureHeaders(c.Consumer)...)
	r.Public(public...)
	return r
}

// openChainHarness opens the harness of a chain target: its parts' harnesses, then its own
// nemesis (every hop's faults) and environment. No baseline: the client sends the chain's
// first request.
func (h *Harness) openChainHarness(ctx context.Context) (*Harness, error) {
	parts, err := h.openChain(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	h.kit = newFaults(h.target)
	h.env = newEnv(h.target, h.o.settings, chainRedactor(h.target.Chain))
	h.env.waits = newWaitPrinter(h.o.log)
	h.env.Faults, h.env.chain = h.kit, parts
	h.env.Limits = cmp.Or(h.limits, LocalLimits)
	h.env.procs = &h.procs
	h.kit.Nemesis.Observe(func(ev faults.Event) {
		h.env.History.AddEvent(history.Event{At: ev.Time, Action: string(ev.Action), Kind: ev.Kind, Target: ev.Target,
			Fault: ev.Fault, Err: ev.Error})
	})
	return h, nil
}

// ProxyTo returns a fault proxy (on the embedded Toxiproxy, or the target's external one) that
// listens on a port of its own and forwards to upstream (host:port): the listener a chain's
// client reaches its API through.
func (f *Faults) ProxyTo(name, upstream string) (*faults.Proxy, error) {
	n, err := f.net()
	if err != nil {
		return nil, err
	}
	return n.Proxy(name, upstream)
}
