package broker

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// muteProxy forwards TCP connections to upstream; muted, it drops what upstream answers; cut
// closes every connection.
type muteProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	muted bool
	conns []net.Conn
}

func newMuteProxy(t *testing.T, upstream string) *muteProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &muteProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c) }()
			go p.answer(c, u)
		}
	}()
	return p
}

// answer copies what upstream answers to c unless muted.
func (p *muteProxy) answer(c, u net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := u.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		muted := p.muted
		p.mu.Unlock()
		if !muted {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
	}
}

func (p *muteProxy) mute() { p.mu.Lock(); p.muted = true; p.mu.Unlock() }

func (p *muteProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// A publication whose ack is lost stops waiting once its link is lost: the stream stored it,
// the error says the outcome is unknown (not ErrNotPublished), long before the context ends.
func TestJetStreamPublishStopsWaitingOnALostLink(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	topo := setupJetStream(t)
	p := newMuteProxy(t, strings.TrimPrefix(topo.URL, "nats://"))
	pub, err := NewJetStreamPublisher(ctx, "nats://"+p.ln.Addr().String(), topo.Subject, topo.Stream)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pub.Publish(ctx, Message{ID: "before"}); err != nil {
		t.Fatalf("publish through the proxy: %v", err)
	}
	p.mute()
	done := make(chan error, 1)
	start := time.Now()
	go func() { _, err := pub.Publish(ctx, Message{ID: "lost-ack"}); done <- err }()
	stored := func() uint64 {
		var n uint64
		_ = withJetStream(ctx, topo.URL, 5*time.Second, func(ctx context.Context, js jetstream.JetStream) error {
			s, err := js.Stream(ctx, topo.Stream)
			if err == nil {
				n = s.CachedInfo().State.Msgs
			}
			return err
		})
		return n
	}
	for stored() < 2 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the stream never stored the publication whose ack is muted")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.cut()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, ErrNotPublished) || !strings.Contains(err.Error(), "lost before the stream's ack") {
			t.Errorf("publish whose link was lost: %v, want an unknown outcome saying the link was lost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the publication still waits for its ack 10s after its link was lost")
	}
}
