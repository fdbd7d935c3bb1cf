package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
)

// external is a Toxiproxy server reached over its HTTP API.
type external struct {
	endpoint string
	client   *toxiclient.Client

	mu      sync.Mutex
	proxies map[string]*toxiclient.Proxy
}

func newExternal(url string) (*external, error) {
	endpoint := strings.TrimSuffix(url, "/")
	c := toxiclient.NewClient(endpoint)
	c.UserAgent = "retrysafe"
	if _, err := c.Version(); err != nil {
		return nil, fmt.Errorf("toxiproxy at %s does not answer (is the server running? "+
			"leave toxiproxy unset in the target file to embed one): %w", endpoint, err)
	}
	return &external{endpoint: endpoint, client: c, proxies: map[string]*toxiclient.Proxy{}}, nil
}

func (x *external) url() string {
	if strings.Contains(x.endpoint, "://") {
		return x.endpoint
	}
	return "http://" + x.endpoint
}

func (x *external) createProxy(name, listen, upstream string) (string, error) {
	p, err := x.client.CreateProxy(name, listen, upstream)
	if err != nil {
		return "", err
	}
	x.mu.Lock()
	x.proxies[name] = p
	x.mu.Unlock()
	return p.Listen, nil
}

func (x *external) proxy(name string) (*toxiclient.Proxy, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.proxies[name]
	if !ok {
		return nil, fmt.Errorf("proxy %q not found", name)
	}
	return p, nil
}

func (x *external) deleteProxy(name string) error {
	p, err := x.proxy(name)
	if err != nil {
		return err
	}
	x.mu.Lock()
	delete(x.proxies, name)
	x.mu.Unlock()
	if err := p.Delete(); err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

func (x *external) addToxic(proxy string, t toxic) error {
	p, err := x.proxy(proxy)
	if err != nil {
		return err
	}
	_, err = p.AddToxic(t.Name, t.Type, string(t.Stream), t.Toxicity, t.Attributes)
	return err
}

func (x *external) removeToxic(_ context.Context, proxy, name string) error {
	p, err := x.proxy(proxy)
	if err != nil {
		return nil // deleted: its toxics are gone
	}
	if err := p.RemoveToxic(name); err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

func (x *external) setEnabled(proxy string, enabled bool) error {
	p, err := x.proxy(proxy)
	if err != nil {
		return err
	}
	x.mu.Lock() // Enable and Disable write p.Enabled
	defer x.mu.Unlock()
	if enabled {
		return p.Enable()
	}
	return p.Disable()
}

func (x *external) close() error { return nil }

// isNotFound reports whether err is Toxiproxy's 404 (proxy or toxic not found).
func isNotFound(err error) bool {
	var apiErr *toxiclient.ApiError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}
