package faults

import (
	"fmt"
	"time"
)

// StorageProxy is a Toxiproxy proxy between the target and its database or cache (the target
// file's storage.address): the target is started with Listen instead of the real address, and
// the faults act on that link.
type StorageProxy struct {
	proxy   *Proxy
	address string
}

// NewStorageProxy puts a proxy named "storage-ADDRESS" in front of address (host:port),
// listening on listen ("" = 127.0.0.1 on any free port).
func NewStorageProxy(n *Network, address, listen string) (*StorageProxy, error) {
	if listen == "" {
		listen = DefaultProxyListen
	}
	p, err := n.ProxyAt("storage-"+address, listen, address)
	if err != nil {
		return nil, fmt.Errorf("storage proxy for %s: %w", address, err)
	}
	return &StorageProxy{proxy: p, address: address}, nil
}

// Listen returns the proxied address to hand to the target ({{.Storage}}).
func (s *StorageProxy) Listen() string { return s.proxy.Listen() }

// Address returns the real address of the store.
func (s *StorageProxy) Address() string { return s.address }

// Latency returns a fault that delays every answer of the store by d, so that each round trip
// (query, commit, lock) takes about d longer and every window inside the target widens.
func (s *StorageProxy) Latency(d time.Duration) Fault {
	f := s.proxy.Latency(d, 0, Downstream).(*toxicFault)
	f.kind, f.target = KindStorageLatency, "storage "+s.address
	return f
}

// Reset returns a fault that cuts every connection to the store at its next answer: the
// statement in flight reaches the store, its answer never reaches the target and the
// connection dies, so an open transaction is rolled back by the store. (If that statement was
// the COMMIT, the transaction is committed and the target cannot know.) While injected, new
// connections die at their first answer. Open connections are closed, new ones reset (see
// Proxy.ResetPeer).
func (s *StorageProxy) Reset() Fault {
	f := s.proxy.ResetPeer(0).(*toxicFault)
	f.kind, f.target = KindStorageReset, "storage "+s.address
	return f
}
