package broker

import (
	"errors"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/retrysafe/retrysafe/faults"
)

func TestAMQPTopologyNames(t *testing.T) {
	topo, err := NewAMQPTopology("run-1")
	if err != nil {
		t.Fatal(err)
	}
	got := [...]string{topo.Exchange, topo.Queue, topo.RoutingKey, topo.URL}
	want := [...]string{"run-1.x", "run-1.q", "run-1", DefaultAMQPURL}
	if got != want {
		t.Errorf("names = %q, want %q", got, want)
	}
	if _, err := NewAMQPTopology("run.1"); err == nil {
		t.Error("a name with a dot was accepted")
	}
}

func TestAMQPPublishReachesQueue(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupAMQP(t)
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	var seqs []uint64
	for _, id := range []string{"m-1", "m-2"} {
		r, err := pub.Publish(ctx, Message{ID: id, Body: []byte("body " + id), Headers: map[string]string{"k": "v"}})
		if err != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
		if r.Duplicate {
			t.Errorf("publish %s: reported a duplicate on AMQP", id)
		}
		seqs = append(seqs, r.Sequence)
	}
	if seqs[0] == seqs[1] {
		t.Errorf("both messages have sequence %d", seqs[0])
	}
	if s, err := topo.State(ctx); err != nil || s.Ready != 2 {
		t.Fatalf("State = %+v, %v; want 2 ready", s, err)
	}
	d := getOne(t, topo)
	if d.MessageId != "m-1" || string(d.Body) != "body m-1" || d.DeliveryMode != amqp.Persistent || d.Headers["k"] != "v" {
		t.Errorf("got message id %q body %q mode %d headers %v; want m-1, persistent, k=v",
			d.MessageId, d.Body, d.DeliveryMode, d.Headers)
	}
}

// getOne takes the head of topo's queue with basic.get and auto-ack.
func getOne(t *testing.T, topo *AMQPTopology) amqp.Delivery {
	t.Helper()
	var d amqp.Delivery
	err := withChannel(testContext(t, 10*time.Second), topo.URL, time.Second, func(ch *amqp.Channel) error {
		var ok bool
		var err error
		d, ok, err = ch.Get(topo.Queue, true)
		if err == nil && !ok {
			err = errors.New("queue is empty")
		}
		return err
	})
	if err != nil {
		t.Fatalf("get from %s: %v", topo.Queue, err)
	}
	return d
}

func TestAMQPPublishRefused(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupAMQP(t)
	unbound, err := NewAMQPPublisher(ctx, topo.URL, topo.Exchange, "no-such-key")
	if err != nil {
		t.Fatal(err)
	}
	defer unbound.Close()
	if _, err := unbound.Publish(ctx, Message{ID: "unroutable"}); !errors.Is(err, ErrNotPublished) {
		t.Errorf("unroutable message: err = %v, want ErrNotPublished", err)
	}
	if _, err := unbound.Publish(ctx, Message{}); !errors.Is(err, ErrNotPublished) {
		t.Errorf("empty id: err = %v, want ErrNotPublished", err)
	}

	missing, err := NewAMQPPublisher(ctx, topo.URL, topo.Exchange+"-missing", topo.RoutingKey)
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Close()
	_, err = missing.Publish(ctx, Message{ID: "no-exchange"})
	if !errors.Is(err, ErrNotPublished) {
		t.Errorf("missing exchange: err = %v, want ErrNotPublished", err)
	}
	t.Logf("missing exchange: %v", err)

	// The channel the broker closed is opened again by the next publish.
	pub, err := topo.Publisher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	pub.ch.Close()
	if _, err := pub.Publish(ctx, Message{ID: "after-reopen"}); err != nil {
		t.Errorf("publish after the channel closed: %v", err)
	}
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Publish(ctx, Message{ID: "after-close"}); !errors.Is(err, ErrClosed) {
		t.Errorf("publish after Close: err = %v, want ErrClosed", err)
	}
}

// A confirm that never comes leaves the outcome unknown: the message did reach the queue.
func TestAMQPPublishWithoutConfirmIsUnknown(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupAMQP(t)
	proxy, proxied := newProxy(t, topo.URL)
	pub, err := NewAMQPPublisher(ctx, proxied, topo.Exchange, topo.RoutingKey)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	silence := proxy.Timeout(0, faults.Downstream)
	if err := silence.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silence.Heal(ctx) })
	short := testContext(t, 500*time.Millisecond)
	_, err = pub.Publish(short, Message{ID: "unconfirmed"})
	if err == nil || errors.Is(err, ErrNotPublished) {
		t.Fatalf("err = %v, want an unknown outcome (an error not wrapping ErrNotPublished)", err)
	}
	if err := silence.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	waitReady(t, topo, 1)
}

// waitReady waits up to 5 s for topo's queue to hold want ready messages.
func waitReady(t *testing.T, topo *AMQPTopology, want int) {
	t.Helper()
	ctx := testContext(t, 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := topo.State(ctx)
		if err == nil && s.Ready == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s: state %+v, %v; want %d ready", topo.Queue, s, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestAMQPTeardownTwice(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	topo := setupAMQP(t)
	for i := range 2 {
		if err := topo.Teardown(ctx); err != nil {
			t.Fatalf("teardown %d: %v", i+1, err)
		}
	}
	if s, err := topo.State(ctx); err == nil {
		t.Errorf("queue still there after teardown: %+v", s)
	}
}

// newProxy starts an embedded Toxiproxy forwarding to the host of brokerURL, and returns it
// with brokerURL through it.
func newProxy(t *testing.T, brokerURL string) (*faults.Proxy, string) {
	t.Helper()
	u, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := faults.NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	p, err := n.Proxy("broker", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Listen()
	return p, u.String()
}
