package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// embedded is a Toxiproxy server inside this process, driven through its collections; its
// HTTP API is served on 127.0.0.1 for inspection and for external clients.
type embedded struct {
	srv  *toxiproxy.ApiServer
	http *http.Server
	addr string
	done chan struct{} // closed when the HTTP API stopped serving
}

func newEmbedded() (*embedded, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	e := &embedded{
		srv:  srv,
		http: &http.Server{Handler: srv.Routes(), ReadHeaderTimeout: 10 * time.Second},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(e.done)
		_ = e.http.Serve(ln)
	}()
	return e, nil
}

func (e *embedded) url() string { return "http://" + e.addr }

func (e *embedded) createProxy(name, listen, upstream string) (string, error) {
	p := toxiproxy.NewProxy(e.srv, name, listen, upstream)
	if err := e.srv.Collection.Add(p, true); err != nil {
		return "", err
	}
	// Start has returned, so the listener is bound and p.Listen holds its address.
	return p.Listen, nil
}

func (e *embedded) deleteProxy(name string) error {
	return e.srv.Collection.Remove(name)
}

func (e *embedded) addToxic(proxy string, t toxic) error {
	p, err := e.srv.Collection.Get(proxy)
	if err != nil {
		return err
	}
	body, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = p.Toxics.AddToxicJson(bytes.NewReader(body))
	return err
}

func (e *embedded) removeToxic(ctx context.Context, proxy, name string) error {
	p, err := e.srv.Collection.Get(proxy)
	if errors.Is(err, toxiproxy.ErrProxyNotFound) {
		return nil // the proxy and its toxics are gone
	}
	if err != nil {
		return err
	}
	// RemoveToxic logs through zerolog.Ctx(ctx): the context must not be nil.
	if ctx == nil {
		ctx = context.Background()
	}
	err = p.Toxics.RemoveToxic(zerolog.Nop().WithContext(ctx), name)
	if errors.Is(err, toxiproxy.ErrToxicNotFound) {
		return nil
	}
	return err
}

func (e *embedded) setEnabled(proxy string, enabled bool) error {
	p, err := e.srv.Collection.Get(proxy)
	if err != nil {
		return err
	}
	if !enabled {
		p.Stop() // closes the listener and every connection
		return nil
	}
	// The proxy listens again on the address it had (its port, not port 0).
	if err := p.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
		return err
	}
	return nil
}

func (e *embedded) close() error {
	_ = e.srv.Collection.Clear() // never fails; proxies created through the API go too
	// Not Shutdown: it waits up to 5s for connections that never sent a request.
	err := e.http.Close()
	<-e.done
	return err
}
