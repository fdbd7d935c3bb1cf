package faults

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// toxicFault is a fault made of one Toxiproxy toxic on one proxy: Inject adds it, Heal removes
// it.
type toxicFault struct {
	proxy        *Proxy
	label        string
	toxic        toxic
	kind, target string

	mu       sync.Mutex
	injected bool
}

var (
	_ Fault     = (*toxicFault)(nil)
	_ Described = (*toxicFault)(nil)
)

// toxicFault returns a fault of one toxic of type kind on stream; faultKind is its Kind.
func (p *Proxy) toxicFault(label, kind string, stream Stream, attrs map[string]any, faultKind string) *toxicFault {
	return &toxicFault{
		proxy:  p,
		label:  p.name + ": " + label,
		kind:   faultKind,
		target: p.name,
		toxic: toxic{
			Name:       p.network.toxicName(kind),
			Type:       kind,
			Stream:     stream,
			Toxicity:   1,
			Attributes: attrs,
		},
	}
}

// Name says on which proxy the toxic acts and what it does, e.g. "api-0: cut-response after 0B".
func (f *toxicFault) Name() string { return f.label }

// Kind says what the toxic does (cut-response, latency, reset-peer, timeout, ...).
func (f *toxicFault) Kind() string { return f.kind }

// Target is the proxy's name.
func (f *toxicFault) Target() string { return f.target }

// Inject adds the toxic; it acts on open connections as well as new ones.
func (f *toxicFault) Inject(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.injected {
		return nil
	}
	if !f.proxy.network.alive(f.proxy) {
		return fmt.Errorf("proxy %s: %w", f.proxy.name, ErrClosed)
	}
	if err := f.proxy.network.backend.addToxic(f.proxy.name, f.toxic); err != nil {
		return fmt.Errorf("toxiproxy: add %s toxic to %s: %w", f.toxic.Type, f.proxy.name, err)
	}
	f.injected = true
	return nil
}

// Heal removes the toxic; a toxic or proxy that is already gone counts as healed.
func (f *toxicFault) Heal(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.injected {
		return nil
	}
	err := f.proxy.network.backend.removeToxic(ctx, f.proxy.name, f.toxic.Name)
	if err != nil {
		return fmt.Errorf("toxiproxy: remove %s toxic from %s: %w", f.toxic.Type, f.proxy.name, err)
	}
	f.injected = false
	return nil
}

// CutResponse returns a fault that lets each request reach the upstream and closes the
// connection once it has carried afterBytes bytes back (limit_data on the downstream stream;
// on a fresh connection, afterBytes of the first answer): the upstream did the work, the
// client sees an error or a short read. Keep-alive connections opened before Inject are cut
// too, their bytes counted from Inject on.
func (p *Proxy) CutResponse(afterBytes int) Fault {
	label := fmt.Sprintf("cut-response after %dB", max(afterBytes, 0))
	return p.toxicFault(label, "limit_data", Downstream, map[string]any{"bytes": max(afterBytes, 0)}, KindCutResponse)
}

// Latency returns a fault that delays the data on stream by d ± jitter (whole milliseconds,
// rounded up). Data read together is delayed together, so each request/answer round trip
// through the proxy costs about d more, not d per packet.
func (p *Proxy) Latency(d, jitter time.Duration, stream Stream) Fault {
	label := fmt.Sprintf("latency %v±%v %s", d, jitter, stream)
	return p.toxicFault(label, "latency", stream, map[string]any{
		"latency": millis(d),
		"jitter":  millis(jitter),
	}, KindLatency)
}

// ResetPeer returns a fault that lets requests reach the upstream and resets the connection
// timeout after the answer starts (reset_peer on the downstream stream). Connections opened
// after Inject are reset with a TCP RST; connections already open are closed with a FIN
// (Toxiproxy sets SO_LINGER 0 only when a connection starts).
func (p *Proxy) ResetPeer(timeout time.Duration) Fault {
	label := fmt.Sprintf("reset-peer after %v", timeout)
	return p.toxicFault(label, "reset_peer", Downstream, map[string]any{"timeout": millis(timeout)}, KindResetPeer)
}

// Timeout returns a fault that swallows all data on stream and closes the connection once
// the stream has carried nothing for `after` (0 = keeps it open and silent until healed). On
// Downstream the request reaches the upstream and no answer comes back: the client's own
// timeout decides. The upstream closing its side still reaches the client (an HTTP server
// answering "Connection: close" makes the client see EOF at once). Healing closes the
// connections the toxic silenced.
func (p *Proxy) Timeout(after time.Duration, stream Stream) Fault {
	label := fmt.Sprintf("timeout after %v %s", after, stream)
	return p.toxicFault(label, "timeout", stream, map[string]any{"timeout": millis(after)}, KindTimeout)
}

// millis converts d to whole milliseconds, rounding up, as Toxiproxy's attributes want.
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// Disable returns a fault that takes the proxy down: it stops listening and drops every
// connection, so clients get "connection refused". Heal listens again on the same address.
func (p *Proxy) Disable() Fault {
	return &disableFault{proxy: p}
}

type disableFault struct {
	proxy    *Proxy
	mu       sync.Mutex
	disabled bool
}

var _ Fault = (*disableFault)(nil)

// Name returns "PROXY: disable".
func (f *disableFault) Name() string { return f.proxy.name + ": disable" }

// Kind is KindPartition: the link is down.
func (f *disableFault) Kind() string { return KindPartition }

// Target is the proxy's name.
func (f *disableFault) Target() string { return f.proxy.name }

// Inject stops the proxy.
func (f *disableFault) Inject(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.disabled {
		return nil
	}
	if !f.proxy.network.alive(f.proxy) {
		return fmt.Errorf("proxy %s: %w", f.proxy.name, ErrClosed)
	}
	if err := f.proxy.network.backend.setEnabled(f.proxy.name, false); err != nil {
		return fmt.Errorf("toxiproxy: disable %s: %w", f.proxy.name, err)
	}
	f.disabled = true
	return nil
}

// Heal starts the proxy again on its address; a proxy that was removed counts as healed.
func (f *disableFault) Heal(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.disabled || !f.proxy.network.alive(f.proxy) {
		f.disabled = false
		return nil
	}
	if err := f.proxy.network.backend.setEnabled(f.proxy.name, true); err != nil {
		return fmt.Errorf("toxiproxy: enable %s again on %s: %w", f.proxy.name, f.proxy.listen, err)
	}
	f.disabled = false
	return nil
}
