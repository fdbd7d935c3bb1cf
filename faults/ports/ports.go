// Package ports keeps a TCP port of 127.0.0.1 for one process across its restarts.
//
// A harness that picks a free port, closes it and hands it to a process it starts leaves the
// port free for a moment, and again between a SIGKILL and the restart: another program of the
// machine (an outgoing connection, a listener on port 0, another self-test cell's process) may
// take it meanwhile, and the harness then reaches that program instead of its own. A
// Reservation closes the gap: it binds the port with SO_REUSEPORT and never listens on it, so
// that the kernel gives the port to no one else (no bind to port 0, no outgoing connection, no
// listener without SO_REUSEPORT), while the process it is handed to listens on it with
// SO_REUSEPORT (Listen) as often as it is restarted. Where SO_REUSEPORT is not available the
// reservation only picks a port that was free.
package ports

import (
	"context"
	"errors"
	"net"
)

// Reservation holds ports of 127.0.0.1 until Close.
type Reservation struct {
	addrs []string
	held  []func() error
}

// Reserve reserves n distinct free ports of 127.0.0.1.
func Reserve(n int) (*Reservation, error) {
	r := &Reservation{}
	for range n {
		addr, release, err := reserve()
		if err != nil {
			r.Close()
			return nil, err
		}
		r.addrs = append(r.addrs, addr)
		r.held = append(r.held, release)
	}
	return r, nil
}

// Addrs returns the reserved addresses, "127.0.0.1:PORT" each.
func (r *Reservation) Addrs() []string { return append([]string(nil), r.addrs...) }

// URLs returns the reserved addresses as http:// URLs.
func (r *Reservation) URLs() []string {
	out := make([]string, len(r.addrs))
	for i, a := range r.addrs {
		out[i] = "http://" + a
	}
	return out
}

// Close gives the ports back. It is safe to call more than once.
func (r *Reservation) Close() error {
	var errs []error
	for _, release := range r.held {
		errs = append(errs, release())
	}
	r.held = nil
	return errors.Join(errs...)
}

// Listen listens on addr; with reusePort, with SO_REUSEPORT, so that it can take a port a
// Reservation holds.
func Listen(addr string, reusePort bool) (net.Listener, error) {
	if !reusePort {
		return net.Listen("tcp", addr)
	}
	lc := net.ListenConfig{Control: reusePortControl}
	return lc.Listen(context.Background(), "tcp", addr)
}
