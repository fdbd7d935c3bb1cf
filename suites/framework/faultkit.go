package framework

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets"
)

// Faults is what the fault properties act with: the nemesis that records and heals every
// fault, and the parts of the target the harness controls. Each is nil when the target file
// does not declare what it needs.
type Faults struct {
	Nemesis *faults.Nemesis
	// Cluster runs the target's instances (targets with a lifecycle).
	Cluster *faults.Cluster
	// Sink is the downstream provider the target calls (targets with a downstream binding).
	Sink *faults.Sink
	// Storage is the fault proxy in front of the target's store (targets naming one).
	Storage *faults.StorageProxy

	t         *targets.Target
	consumers []*consumerKit
	events    *eventKit
	mu        sync.Mutex
	network   *faults.Network
	proxies   map[int]*faults.Proxy
}

// setUpFaults prepares the faults a target allows: the downstream sink (sink, when the caller
// made one, is adopted), the storage proxy, and, for a target with a lifecycle, its running
// instances (started here, bound to the sink and the proxy), and the observers of the events the
// target publishes (label names what they make on the brokers). procs tracks the processes so
// that the caller can reap them.
func setUpFaults(ctx context.Context, t *targets.Target, procs *faults.Processes, sink *faults.Sink, label string) (*Faults, error) {
	f := newFaults(t)
	var sinkURL, storage string
	if sink != nil {
		f.Sink, sinkURL = sink, sink.URL()
	} else if d := t.Downstream; d != nil {
		listen := d.Listen
		if listen == "" {
			listen = "127.0.0.1:0"
		}
		s, err := faults.NewSink(listen, d.KeyHeader)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("downstream sink: %w", err)
		}
		f.Sink, sinkURL = s, s.URL()
	}
	if st := t.Storage; st != nil {
		n, err := f.net()
		if err == nil {
			f.Storage, err = faults.NewStorageProxy(n, st.Address, st.Listen)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("storage proxy: %w", err)
		}
		storage = f.Storage.Listen()
	}
	brokerAddr, err := f.setUpConsumers(ctx, t)
	if err != nil {
		f.Close()
		return nil, err
	}
	eventsURL, eventsBroker, err := f.setUpEvents(ctx, t, label)
	if err != nil {
		f.Close()
		return nil, err
	}
	if t.Lifecycle != nil {
		vars := targets.LifecycleVars{Downstream: sinkURL, Storage: storage, Broker: brokerAddr, EventsURL: eventsURL, EventsBroker: eventsBroker}
		c, err := faults.StartCluster(ctx, t, procs, vars, f.brokerCount)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.Cluster = c
	}
	if err := errors.Join(f.openPublishers(ctx), f.observeEvents(ctx)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// newFaults returns a fault kit with only a nemesis (network faults start on first use).
func newFaults(t *targets.Target) *Faults {
	return &Faults{Nemesis: faults.NewNemesis(), t: t, proxies: map[int]*faults.Proxy{}}
}

// net returns the Toxiproxy network, starting it on first use (embedded, or the external
// server the target file names).
func (f *Faults) net() (*faults.Network, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.network != nil {
		return f.network, nil
	}
	var err error
	if f.t.Toxiproxy != "" {
		f.network, err = faults.NewExternal(f.t.Toxiproxy)
	} else {
		f.network, err = faults.NewEmbedded()
	}
	return f.network, err
}

// ProxyFor returns a fault proxy in front of instance i and the instance as seen through it.
func (f *Faults) ProxyFor(i int) (*faults.Proxy, *targets.Instance, error) {
	n, err := f.net()
	if err != nil {
		return nil, nil, err
	}
	in := f.t.Instances[i]
	f.mu.Lock()
	p := f.proxies[i]
	f.mu.Unlock()
	if p == nil {
		if p, err = n.Proxy(fmt.Sprintf("instance-%d", i), in.Addr()); err != nil {
			return nil, nil, err
		}
		f.mu.Lock()
		f.proxies[i] = p
		f.mu.Unlock()
	}
	u := *in.URL
	u.Host = p.Listen()
	return p, &targets.Instance{URL: &u, Index: in.Index}, nil
}

// Close heals every fault and stops the sink and the proxies (not the cluster's processes:
// the Processes that started them reap them).
func (f *Faults) Close() error {
	if f == nil {
		return nil
	}
	errs := []error{f.healAll(), f.closeConsumers(), f.events.close()}
	if f.Sink != nil {
		errs = append(errs, f.Sink.Close())
	}
	f.mu.Lock()
	n := f.network
	f.network = nil
	f.mu.Unlock()
	if n != nil {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

// healAll heals every fault still injected, the latest first.
func (f *Faults) healAll() error {
	if f == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.Nemesis.HealAll(ctx)
}

// downstream returns what the sink saw of one ref: its calls (answered and held), their
// distinct downstream keys and the effects performed. Not taken without a sink.
func (f *Faults) downstream(ref string) check.Downstream {
	if f == nil || f.Sink == nil {
		return check.Downstream{}
	}
	d := check.Downstream{Taken: true, Effects: f.Sink.EffectsForRef(ref)}
	seen := map[string]bool{}
	for _, c := range append(f.Sink.CallsFor(ref), f.Sink.Held()...) {
		if c.Ref != ref {
			continue
		}
		d.Calls++
		if !seen[c.Key] {
			seen[c.Key] = true
			d.Keys = append(d.Keys, c.Key)
		}
	}
	return d
}

// FailNextHook returns the target's fail_next hook as a fault: injecting it sends the hook's
// request to instance i (as tenant tn), so that the instance's next attempt fails; healing does
// nothing (the attempt used it up).
func (f *Faults) FailNextHook(i int, tn *targets.Tenant, v targets.Vars) faults.Fault {
	in := &f.t.Instances[i]
	return faults.Func(faults.KindFailNext, fmt.Sprintf("instance %d", i), fmt.Sprintf("fail_next hook on instance %d", i),
		func(ctx context.Context) error {
			hc := f.t.ObserverClient(10*time.Second, 0)
			defer hc.CloseIdleConnections()
			return f.t.SendFailNext(ctx, hc, in, tn, v)
		}, nil)
}

// ConsumerFailNext returns a consumer's fail_next hook request (hook) for one event as a fault:
// injecting it sends the request to instance i, so that the first handling of the event (or,
// for a hook that names no event, the next handling of any) fails at the hook's point; healing
// sends the consumer's disarm hook to the instance when it declares one (an instance that did
// not handle the event must not fail a later one), and does nothing otherwise (the handling
// used the failure up).
func (f *Faults) ConsumerFailNext(c *targets.Consumer, hook *targets.FailHook, i int, v targets.EventVars) faults.Fault {
	in := &f.t.Instances[i]
	what := "for event " + v.EventID
	if hook.AnyEvent {
		what = "for the next handling of any event"
	}
	if hook.When != "" {
		what += " at " + hook.When
	}
	send := func(ctx context.Context, fn func(context.Context, *http.Client) error) error {
		hc := f.t.ObserverClient(10*time.Second, 0)
		defer hc.CloseIdleConnections()
		return fn(ctx, hc)
	}
	var heal func(context.Context) error
	if c.Hooks.Disarm != nil {
		heal = func(ctx context.Context) error {
			return send(ctx, func(ctx context.Context, hc *http.Client) error { return c.SendDisarm(ctx, hc, in) })
		}
	}
	return faults.Func(faults.KindFailNext, fmt.Sprintf("instance %d", i), fmt.Sprintf("fail_next hook of consumer %s on instance %d %s", c.Name, i, what),
		func(ctx context.Context) error {
			return send(ctx, func(ctx context.Context, hc *http.Client) error { return c.SendFailNext(ctx, hc, in, hook, v) })
		}, heal)
}

// ConsumerSlowEnv returns the fault that restarts every instance of the managed consumer with
// its hooks.slow.env rendered for handlings of ms milliseconds; healing restarts them without
// it. Nil without a cluster or such a hook.
func (f *Faults) ConsumerSlowEnv(c *targets.Consumer, ms int64) (faults.Fault, error) {
	if f.Cluster == nil || !c.Hooks.SlowByEnv() {
		return nil, fmt.Errorf("consumer %s: no slow environment to restart a managed consumer with", c.Name)
	}
	env, err := c.SlowEnv(ms)
	if err != nil {
		return nil, err
	}
	return f.Cluster.EnvFault(env), nil
}
