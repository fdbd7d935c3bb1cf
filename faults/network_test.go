package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
)

// upstreamBody is what the counting upstream answers: large enough to be cut in the middle.
var upstreamBody = strings.Repeat("x", 8192)

// upstream is an HTTP server on 127.0.0.1 that counts how often its handler ran.
type upstream struct {
	*httptest.Server
	hits atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Length", fmt.Sprint(len(upstreamBody)))
		_, _ = io.WriteString(w, upstreamBody)
	}))
	t.Cleanup(u.Close)
	return u
}

// addr returns the upstream's host:port.
func (u *upstream) addr() string { return u.Listener.Addr().String() }

// post sends one POST to addr on a fresh connection. No keep-alive and no idempotency header,
// so net/http never re-sends it behind the test's back.
func post(ctx context.Context, addr string) ([]byte, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/charge", strings.NewReader(`{}`))
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return body, err
}

// mustPost asserts that a POST through addr gets the whole upstream answer.
func mustPost(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body, err := post(ctx, addr)
	if err != nil || len(body) != len(upstreamBody) {
		t.Fatalf("POST via %s: got %d bytes, err %v; want %d bytes", addr, len(body), err, len(upstreamBody))
	}
}

// eachNetwork runs f against an embedded Toxiproxy and against a Toxiproxy driven as an
// external server over its HTTP API.
func eachNetwork(t *testing.T, f func(t *testing.T, n *Network)) {
	t.Run("embedded", func(t *testing.T) { f(t, newEmbeddedT(t)) })
	t.Run("external", func(t *testing.T) {
		server := newEmbeddedT(t)
		n, err := NewExternal(server.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close() })
		f(t, n)
	})
}

func newEmbeddedT(t *testing.T) *Network {
	t.Helper()
	n, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

func newProxyT(t *testing.T, n *Network, upstream string) *Proxy {
	t.Helper()
	p, err := n.Proxy("api-"+strings.ReplaceAll(t.Name(), "/", "-"), upstream)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// refused asserts that nothing listens on addr any more.
func refused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
		t.Errorf("%s still accepts connections", addr)
	}
}

// freeAddrT returns a 127.0.0.1 address that was free a moment ago.
func freeAddrT(t *testing.T) string {
	t.Helper()
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestProxyForwards(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		up := newUpstream(t)
		p := newProxyT(t, n, up.addr())
		if !strings.HasPrefix(p.Listen(), "127.0.0.1:") || p.Upstream() != up.addr() {
			t.Errorf("proxy listens on %s to %s, want 127.0.0.1:PORT to %s", p.Listen(), p.Upstream(), up.addr())
		}
		mustPost(t, p.Listen())
		if got := up.hits.Load(); got != 1 {
			t.Errorf("upstream ran %d times, want 1", got)
		}
	})
}

func TestProxyAtFixedAddress(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		up := newUpstream(t)
		want := freeAddrT(t)
		p, err := n.ProxyAt("fixed", want, up.addr())
		if err != nil {
			t.Fatal(err)
		}
		if p.Listen() != want {
			t.Errorf("Listen() = %s, want %s", p.Listen(), want)
		}
		mustPost(t, want)
	})
}

func TestProxyNameTaken(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		if _, err := n.Proxy("twice", "127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Proxy("twice", "127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "twice") {
			t.Errorf("second proxy named twice: err %v, want an error naming it", err)
		}
	})
}

func TestCloseFreesPorts(t *testing.T) {
	n, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t)
	p1, err1 := n.Proxy("one", up.addr())
	p2, err2 := n.Proxy("two", up.addr())
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	open, err := net.DialTimeout("tcp", p1.Listen(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	api := strings.TrimPrefix(n.URL(), "http://")
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, addr := range []string{p1.Listen(), p2.Listen(), api} {
		refused(t, addr)
	}
	_ = open.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := open.Read(make([]byte, 1)); errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Errorf("a connection through a closed proxy stayed open: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := n.Proxy("three", up.addr()); !errors.Is(err, ErrClosed) {
		t.Errorf("Proxy after Close: err %v, want ErrClosed", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestExternalCloseRemovesOnlyItsProxies(t *testing.T) {
	server := newEmbeddedT(t)
	up := newUpstream(t)
	theirs, err := server.Proxy("theirs", up.addr())
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewExternal(server.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	mine, err := n.Proxy("mine", up.addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	refused(t, mine.Listen())
	mustPost(t, theirs.Listen())
	proxies, err := toxiclient.NewClient(server.URL()).Proxies()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range proxies {
		names = append(names, name)
	}
	if !slices.Equal(names, []string{"theirs"}) {
		t.Errorf("proxies left on the server: %v, want [theirs]", names)
	}
}

func TestNewExternalUnreachable(t *testing.T) {
	addr := freeAddrT(t)
	_, err := NewExternal("http://" + addr)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("NewExternal(nothing listening): err %v, want an error naming %s", err, addr)
	}
}
