package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned when a Network is used after Close.
var ErrClosed = errors.New("faults: network closed")

// DefaultProxyListen is where a proxy listens when no fixed address is asked for.
const DefaultProxyListen = "127.0.0.1:0"

// Network puts Toxiproxy proxies in front of the target's addresses, so that faults can be
// injected on the wire. It drives either a Toxiproxy embedded in this process (NewEmbedded) or
// an external Toxiproxy server (NewExternal); the faults behave the same on both.
type Network struct {
	backend backend
	seq     atomic.Int64 // numbers toxics, so that names never collide

	mu      sync.Mutex
	proxies map[string]*Proxy
	closed  bool
}

// backend is one Toxiproxy: embedded or reached over its HTTP API.
type backend interface {
	url() string
	createProxy(name, listen, upstream string) (string, error)
	deleteProxy(name string) error
	addToxic(proxy string, t toxic) error
	removeToxic(ctx context.Context, proxy, name string) error // nil when already gone
	setEnabled(proxy string, enabled bool) error
	close() error
}

// toxic is a Toxiproxy toxic as its API writes it.
type toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     Stream         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// Stream is one direction of a proxied connection.
type Stream string

// The two streams of a proxied connection.
const (
	// Upstream carries what the client sends (requests, queries) towards the target.
	Upstream Stream = "upstream"
	// Downstream carries what the target answers back to the client.
	Downstream Stream = "downstream"
)

// NewEmbedded starts a Toxiproxy inside this process. Its HTTP API (URL) and every proxy listen
// on 127.0.0.1 only.
func NewEmbedded() (*Network, error) {
	b, err := newEmbedded()
	if err != nil {
		return nil, err
	}
	return newNetwork(b), nil
}

// NewExternal drives the Toxiproxy server whose HTTP API is at url (such as
// http://127.0.0.1:8474). It fails when the server does not answer.
func NewExternal(url string) (*Network, error) {
	b, err := newExternal(url)
	if err != nil {
		return nil, err
	}
	return newNetwork(b), nil
}

func newNetwork(b backend) *Network {
	return &Network{backend: b, proxies: map[string]*Proxy{}}
}

// URL returns the base URL of the Toxiproxy HTTP API.
func (n *Network) URL() string { return n.backend.url() }

// Proxy starts a proxy named name on 127.0.0.1 (any free port) that forwards to upstream
// (host:port). Names are unique within the Toxiproxy server.
func (n *Network) Proxy(name, upstream string) (*Proxy, error) {
	return n.ProxyAt(name, DefaultProxyListen, upstream)
}

// ProxyAt is Proxy on a fixed listen address (host:port; port 0 = any free port).
func (n *Network) ProxyAt(name, listen, upstream string) (*Proxy, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	if _, ok := n.proxies[name]; ok {
		return nil, fmt.Errorf("proxy %q already exists", name)
	}
	addr, err := n.backend.createProxy(name, listen, upstream)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy: create proxy %q %s -> %s: %w", name, listen, upstream, err)
	}
	p := &Proxy{network: n, name: name, listen: addr, upstream: upstream}
	n.proxies[name] = p
	return p, nil
}

// Close removes every proxy this Network created (closing their listeners and connections)
// and, when embedded, stops the Toxiproxy server. Nothing it opened keeps listening. Calling
// Close again does nothing.
func (n *Network) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	var errs []error
	for name := range n.proxies {
		errs = append(errs, n.backend.deleteProxy(name))
	}
	n.proxies = nil
	errs = append(errs, n.backend.close())
	return errors.Join(errs...)
}

// toxicName returns a name no other toxic of this Network has.
func (n *Network) toxicName(kind string) string {
	return fmt.Sprintf("retrysafe_%s_%d", kind, n.seq.Add(1))
}

// alive reports whether the proxy can still be acted on.
func (n *Network) alive(p *Proxy) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.closed && n.proxies[p.name] == p
}

// Proxy is one Toxiproxy proxy: connections to Listen are forwarded to Upstream, through
// whatever faults are injected. The faults it returns act on this proxy only.
type Proxy struct {
	network  *Network
	name     string
	listen   string
	upstream string
}

// Name returns the proxy's name.
func (p *Proxy) Name() string { return p.name }

// Listen returns the host:port the proxy accepts connections on.
func (p *Proxy) Listen() string { return p.listen }

// Upstream returns the host:port the proxy forwards to.
func (p *Proxy) Upstream() string { return p.upstream }
