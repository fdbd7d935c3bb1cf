package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// timingSlack absorbs clock and timer granularity when asserting a minimum delay.
const timingSlack = 2 * time.Millisecond

func inject(t *testing.T, f Fault) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Inject(ctx); err != nil {
		t.Fatalf("inject %s: %v", f.Name(), err)
	}
}

func heal(t *testing.T, f Fault) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Heal(ctx); err != nil {
		t.Fatalf("heal %s: %v", f.Name(), err)
	}
}

// timedPost sends one POST through addr and returns how long it took and its error.
func timedPost(addr string, limit time.Duration) (time.Duration, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	body, err := post(ctx, addr)
	return time.Since(start), body, err
}

func TestCutResponse(t *testing.T) {
	tests := []struct {
		name       string
		afterBytes int
	}{
		{"before the status line", 0},
		{"inside the headers", 40},
		{"inside the body", 1000},
	}
	eachNetwork(t, func(t *testing.T, n *Network) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				up := newUpstream(t)
				p := newProxyT(t, n, up.addr())
				f := p.CutResponse(tt.afterBytes)
				inject(t, f)
				_, body, err := timedPost(p.Listen(), 5*time.Second)
				if err == nil {
					t.Fatalf("POST through %s: got %d bytes and no error, want an error", f.Name(), len(body))
				}
				if got := up.hits.Load(); got != 1 {
					t.Errorf("upstream ran %d times, want exactly 1 (the request must reach it)", got)
				}
				heal(t, f)
				mustPost(t, p.Listen())
			})
		}
	})
}

// openConn opens a keep-alive connection to addr and sends a first request on it; the
// connection is closed when the test ends.
func openConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	if err := roundTrip(conn, r); err != nil {
		t.Fatalf("first request on the open connection: %v", err)
	}
	return conn, r
}

// TestCutResponseOnOpenConnection checks that a keep-alive connection opened before Inject
// is cut too: the harness's clients reuse connections.
func TestCutResponseOnOpenConnection(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		up := newUpstream(t)
		p := newProxyT(t, n, up.addr())
		conn, r := openConn(t, p.Listen())
		inject(t, p.CutResponse(0))
		if err := roundTrip(conn, r); err == nil {
			t.Error("second request on the same connection got an answer, want it cut")
		}
		if got := up.hits.Load(); got != 2 {
			t.Errorf("upstream ran %d times, want 2", got)
		}
	})
}

// roundTrip writes one keep-alive request on conn and reads its whole answer.
func roundTrip(conn net.Conn, r *bufio.Reader) error {
	req := "POST /charge HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}"
	if _, err := io.WriteString(conn, req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func TestLatency(t *testing.T) {
	tests := []struct {
		stream    Stream
		d, jitter time.Duration
		atLeast   time.Duration
	}{
		{Downstream, 150 * time.Millisecond, 0, 150 * time.Millisecond},
		{Upstream, 150 * time.Millisecond, 0, 150 * time.Millisecond},
		{Downstream, 150 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond},
	}
	eachNetwork(t, func(t *testing.T, n *Network) {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s %v±%v", tt.stream, tt.d, tt.jitter), func(t *testing.T) {
				up := newUpstream(t)
				p := newProxyT(t, n, up.addr())
				f := p.Latency(tt.d, tt.jitter, tt.stream)
				inject(t, f)
				took, _, err := timedPost(p.Listen(), 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if took < tt.atLeast-timingSlack || took > tt.d+tt.jitter+2*time.Second {
					t.Errorf("POST with %s took %v, want at least %v (slack %v)", f.Name(), took, tt.atLeast, timingSlack)
				}
				heal(t, f)
				if took, _, err := timedPost(p.Listen(), 5*time.Second); err != nil || took >= tt.atLeast-tt.jitter/2 {
					t.Errorf("POST after heal took %v (err %v), want well under %v", took, err, tt.atLeast)
				}
			})
		}
	})
}

func TestResetPeer(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		up := newUpstream(t)
		p := newProxyT(t, n, up.addr())
		f := p.ResetPeer(0)
		inject(t, f)
		_, _, err := timedPost(p.Listen(), 5*time.Second)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("POST through %s: err %v, want connection reset by peer", f.Name(), err)
		}
		if got := up.hits.Load(); got != 1 {
			t.Errorf("upstream ran %d times, want 1", got)
		}
		heal(t, f)
		mustPost(t, p.Listen())
	})
}

// TestResetPeerOnOpenConnection pins down a Toxiproxy detail: a connection that was open
// before the toxic was added is closed with a FIN (the client reads EOF), not reset.
func TestResetPeerOnOpenConnection(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		up := newUpstream(t)
		p := newProxyT(t, n, up.addr())
		conn, r := openConn(t, p.Listen())
		inject(t, p.ResetPeer(0))
		if err := roundTrip(conn, r); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("request on a connection opened before the toxic: err %v, want EOF", err)
		}
		if got := up.hits.Load(); got != 2 {
			t.Errorf("upstream ran %d times, want 2", got)
		}
	})
}

// TestTimeout uses keep-alive connections: when the upstream closes its side (as it does for
// "Connection: close"), Toxiproxy passes the close on and the client sees EOF at once.
func TestTimeout(t *testing.T) {
	tests := []struct {
		name    string
		after   time.Duration
		wantErr func(error) bool
		atLeast time.Duration
	}{
		{"silent until the client gives up", 0, isTimeout, 200 * time.Millisecond},
		{"closed by the proxy", 100 * time.Millisecond, func(err error) bool { return err != nil && !isTimeout(err) }, 100 * time.Millisecond},
	}
	eachNetwork(t, func(t *testing.T, n *Network) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				up := newUpstream(t)
				p := newProxyT(t, n, up.addr())
				f := p.Timeout(tt.after, Downstream)
				inject(t, f)
				took, err := keepAliveRoundTrip(p.Listen(), 200*time.Millisecond)
				if !tt.wantErr(err) || took < tt.atLeast-timingSlack {
					t.Errorf("request through %s: err %v after %v, want a different error after %v", f.Name(), err, took, tt.atLeast)
				}
				if got := up.hits.Load(); got != 1 {
					t.Errorf("upstream ran %d times, want 1 (the request reached it)", got)
				}
				heal(t, f)
				mustPost(t, p.Listen())
			})
		}
	})
}

// keepAliveRoundTrip sends one keep-alive request on a new connection to addr and waits at
// most limit for its answer.
func keepAliveRoundTrip(addr string, limit time.Duration) (time.Duration, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	start := time.Now()
	_ = conn.SetDeadline(start.Add(limit))
	err = roundTrip(conn, bufio.NewReader(conn))
	return time.Since(start), err
}

func TestDisable(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		up := newUpstream(t)
		p := newProxyT(t, n, up.addr())
		f := p.Disable()
		inject(t, f)
		refused(t, p.Listen())
		heal(t, f)
		mustPost(t, p.Listen())
	})
}

// TestFaultsAreIdempotent injects and heals every proxy fault twice, and heals each before it
// was ever injected: nothing fails and the proxy works afterwards.
func TestFaultsAreIdempotent(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		up := newUpstream(t)
		p := newProxyT(t, n, up.addr())
		for _, f := range []Fault{
			p.CutResponse(0), p.Latency(time.Millisecond, 0, Upstream), p.ResetPeer(0),
			p.Timeout(0, Downstream), p.Disable(),
		} {
			heal(t, f)
			inject(t, f)
			inject(t, f)
			heal(t, f)
			heal(t, f)
		}
		mustPost(t, p.Listen())
	})
}

func TestFaultsAfterClose(t *testing.T) {
	eachNetwork(t, func(t *testing.T, n *Network) {
		p := newProxyT(t, n, newUpstream(t).addr())
		injected, fresh := p.Latency(time.Second, 0, Downstream), p.Disable()
		inject(t, injected)
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		heal(t, injected) // the proxy is gone, so is its toxic
		if err := fresh.Inject(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("inject after Close: err %v, want ErrClosed", err)
		}
	})
}

func TestMillis(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {-time.Second, 0}, {time.Microsecond, 1}, {time.Millisecond, 1}, {1500 * time.Microsecond, 2}}
	for _, tt := range tests {
		if got := millis(tt.d); got != tt.want {
			t.Errorf("millis(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
