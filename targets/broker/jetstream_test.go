package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestNewJetStreamTopology(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		ok   bool
	}{
		{"defaults", nil, true},
		{"shortest window", []Option{WithDuplicatesWindow(MinDuplicatesWindow)}, true},
		{"longest window", []Option{WithDuplicatesWindow(MaxDuplicatesWindow)}, true},
		{"window 0 (the server's 2 min)", []Option{WithDuplicatesWindow(0)}, false},
		{"window too short", []Option{WithDuplicatesWindow(50 * time.Millisecond)}, false},
		{"window too long", []Option{WithDuplicatesWindow(2 * time.Second)}, false},
		{"no ack wait", []Option{WithAckWait(0)}, false},
		{"max age under the window", []Option{WithStreamMaxAge(time.Millisecond)}, false},
		{"bad durable", []Option{WithDurable("a.b")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topo, err := NewJetStreamTopology("run-1", tt.opts...)
			if got := err == nil; got != tt.ok {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				return
			}
			got := [...]string{topo.Stream, topo.Subject, topo.Durable}
			want := [...]string{"run-1", "run-1.events", "run-1-consumer"}
			if got != want {
				t.Errorf("names = %q, want %q", got, want)
			}
		})
	}
}

func TestJetStreamSetup(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupJetStream(t, WithStorage(jetstream.MemoryStorage))
	err := withJetStream(ctx, topo.URL, time.Second, func(ctx context.Context, js jetstream.JetStream) error {
		s, err := js.Stream(ctx, topo.Stream)
		if err != nil {
			return err
		}
		c := s.CachedInfo().Config
		if c.Duplicates != DefaultDuplicatesWindow || c.Storage != jetstream.MemoryStorage ||
			len(c.Subjects) != 1 || c.Subjects[0] != topo.Subject {
			t.Errorf("stream config: duplicates %v storage %v subjects %v; want %v memory [%s]",
				c.Duplicates, c.Storage, c.Subjects, DefaultDuplicatesWindow, topo.Subject)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Setup(ctx); err != nil {
		t.Errorf("second setup: %v", err)
	}
}

func TestJetStreamConsumer(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupJetStream(t)
	if err := topo.CreateConsumer(ctx); err != nil {
		t.Fatal(err)
	}
	if err := topo.CreateConsumer(ctx); err != nil {
		t.Errorf("creating the same consumer again: %v", err)
	}
	err := withJetStream(ctx, topo.URL, time.Second, func(ctx context.Context, js jetstream.JetStream) error {
		c, err := js.Consumer(ctx, topo.Stream, topo.Durable)
		if err != nil {
			return err
		}
		cfg := c.CachedInfo().Config
		if cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.AckWait != DefaultAckWait ||
			cfg.MaxDeliver != -1 || cfg.FilterSubject != topo.Subject || cfg.Durable != topo.Durable {
			t.Errorf("consumer config: ack %v wait %v max deliver %d filter %q durable %q",
				cfg.AckPolicy, cfg.AckWait, cfg.MaxDeliver, cfg.FilterSubject, cfg.Durable)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	for _, id := range []string{"a", "b"} {
		if _, err := pub.Publish(ctx, Message{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := topo.ConsumerState(ctx)
	if err != nil || s.Pending != 2 || s.AckPending != 0 {
		t.Errorf("ConsumerState = %+v, %v; want 2 pending, 0 ack pending", s, err)
	}
}

// The stream drops a message id it saw within the duplicates window, and only then: the
// window is as short as asked for.
func TestJetStreamDuplicatesWindow(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupJetStream(t)
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	first, err := pub.Publish(ctx, Message{ID: "dup", Body: []byte("1")})
	start := time.Now()
	if err != nil || first.Duplicate {
		t.Fatalf("first publish: %+v, %v; want stored", first, err)
	}
	again, err := pub.Publish(ctx, Message{ID: "dup", Body: []byte("2")})
	if err != nil || !again.Duplicate || again.Sequence != first.Sequence {
		t.Fatalf("publish within the window: %+v, %v; want a duplicate of sequence %d", again, err, first.Sequence)
	}
	var lapsed time.Duration
	for {
		time.Sleep(10 * time.Millisecond)
		r, err := pub.Publish(ctx, Message{ID: "dup", Body: []byte("3")})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Duplicate {
			lapsed = time.Since(start)
			break
		}
		if time.Since(start) > 2*topo.Duplicates {
			t.Fatalf("still a duplicate %v after the first publish; window %v", time.Since(start), topo.Duplicates)
		}
	}
	t.Logf("duplicates window %v: the id was forgotten after %v", topo.Duplicates, lapsed)
	if lapsed < topo.Duplicates-20*time.Millisecond {
		t.Errorf("the id was forgotten after %v, within the %v window", lapsed, topo.Duplicates)
	}
	if err := topo.WaitOutDuplicates(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := pub.Publish(ctx, Message{ID: "dup"}); err != nil || r.Duplicate {
		t.Errorf("publish after WaitOutDuplicates: %+v, %v; want stored", r, err)
	}
}

func TestJetStreamPublishRefused(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupJetStream(t)
	nowhere, err := NewJetStreamPublisher(ctx, topo.URL, topo.Name+".nowhere", "")
	if err != nil {
		t.Fatal(err)
	}
	defer nowhere.Close()
	if _, err := nowhere.Publish(ctx, Message{ID: "x"}); !errors.Is(err, ErrNotPublished) {
		t.Errorf("subject without a stream: err = %v, want ErrNotPublished", err)
	}
	wrong, err := NewJetStreamPublisher(ctx, topo.URL, topo.Subject, topo.Stream+"-other")
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	if _, err := wrong.Publish(ctx, Message{ID: "x"}); !errors.Is(err, ErrNotPublished) {
		t.Errorf("expecting another stream: err = %v, want ErrNotPublished", err)
	}
	if _, err := wrong.Publish(ctx, Message{}); !errors.Is(err, ErrNotPublished) {
		t.Errorf("empty id: err = %v, want ErrNotPublished", err)
	}
}

func TestJetStreamTeardownTwice(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupJetStream(t)
	for i := range 2 {
		if err := topo.Teardown(ctx); err != nil {
			t.Fatalf("teardown %d: %v", i+1, err)
		}
	}
	if _, err := topo.ConsumerState(ctx); err == nil {
		t.Error("consumer state read after teardown")
	}
}

// ConsumerState reads the durable's BackOff as the server has it, and counts honestly: a
// message delivered and not acknowledged is ack pending and not redelivered until the server
// hands it out again after the first BackOff step.
func TestJetStreamConsumerStateBackOffAndRedelivered(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupJetStream(t)
	backOff := []time.Duration{300 * time.Millisecond, time.Minute}
	var cons jetstream.Consumer
	err := withJetStream(ctx, topo.URL, time.Second, func(ctx context.Context, js jetstream.JetStream) error {
		cfg := topo.ConsumerConfig()
		cfg.BackOff, cfg.MaxDeliver = backOff, 5
		_, err := js.CreateConsumer(ctx, topo.Stream, cfg)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pub.Publish(ctx, Message{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	nc, js, err := connectJetStream(ctx, topo.URL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if cons, err = js.Consumer(ctx, topo.Stream, topo.Durable); err != nil {
		t.Fatal(err)
	}
	fetch := func() {
		t.Helper()
		b, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range b.Messages() {
			n++
		}
		if n != 1 {
			t.Fatalf("fetched %d messages, want 1 (%v)", n, b.Error())
		}
	}
	fetch() // delivered, never acknowledged
	s, err := topo.ConsumerState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.BackOff) != 2 || s.BackOff[0] != backOff[0] || s.BackOff[1] != backOff[1] {
		t.Errorf("BackOff = %v, want %v", s.BackOff, backOff)
	}
	if s.Pending != 0 || s.AckPending != 1 || s.Redelivered != 0 {
		t.Errorf("after the first delivery: %d pending, %d ack pending, %d redelivered; want 0, 1, 0", s.Pending, s.AckPending, s.Redelivered)
	}
	fetch() // the redelivery, after the first step
	if s, err = topo.ConsumerState(ctx); err != nil || s.AckPending != 1 || s.Redelivered != 1 {
		t.Errorf("after the redelivery: %+v, %v; want 1 ack pending, 1 redelivered", s, err)
	}
}
