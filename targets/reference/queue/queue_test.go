package queue

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{Broker: NATS, Stream: "s", Subject: "s.events"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	got := []any{o.URL, o.Durable, o.Prefetch, o.RetryDelay, o.AckWait, o.ReconnectMin, o.ReconnectMax, o.Name}
	want := []any{DefaultNATSURL, "s-consumer", DefaultPrefetch, DefaultRetryDelay, DefaultAckWait,
		DefaultReconnectMin, DefaultReconnectMax, DefaultName}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults = %v, want %v", got, want)
	}
	if o, _ := (Options{Broker: AMQP, Queue: "q"}).withDefaults(); o.URL != DefaultAMQPURL {
		t.Errorf("AMQP URL = %q, want %q", o.URL, DefaultAMQPURL)
	}
}

func TestOptionsInvalid(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string // every part must be in the error
	}{
		{"no broker", Options{}, []string{`Broker ""`}},
		{"amqp without queue", Options{Broker: AMQP}, []string{"Queue is empty"}},
		{"nats without stream or subject", Options{Broker: NATS}, []string{"Stream is empty", "Subject is empty"}},
		{"every problem at once", Options{Broker: AMQP, Prefetch: -1, RetryDelay: -time.Second},
			[]string{"Queue is empty", "Prefetch -1", "RetryDelay -1s"}},
		{"backoff upside down", Options{Broker: AMQP, Queue: "q", ReconnectMin: time.Second, ReconnectMax: time.Millisecond},
			[]string{"ReconnectMax 1ms is shorter than ReconnectMin 1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.opts.withDefaults()
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if err := Run(context.Background(), Options{}, func(context.Context, Message) Decision { return Ack }); err == nil {
		t.Error("Run accepted invalid options")
	}
	if err := Run(context.Background(), Options{Broker: AMQP, Queue: "q"}, nil); err == nil {
		t.Error("Run accepted a nil handler")
	}
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[Decision]string{Ack: "ack", Retry: "retry", Drop: "drop", Decision(7): "Decision(7)"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{min: 50 * time.Millisecond, max: 300 * time.Millisecond}
	var got []time.Duration
	for range 5 {
		got = append(got, b.next())
	}
	b.reset()
	got = append(got, b.next())
	ms := time.Millisecond
	want := []time.Duration{50 * ms, 100 * ms, 200 * ms, 300 * ms, 300 * ms, 50 * ms}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("backoff = %v, want %v", got, want)
	}
	for n, w := range want[:5] {
		if d := backoffDelay(b.min, b.max, n+1); d != w {
			t.Errorf("backoffDelay(attempt %d) = %v, want %v", n+1, d, w)
		}
	}
}

// fakeDelivery records what was done to it, in order.
type fakeDelivery struct {
	steps *[]string
	err   error
}

func (f fakeDelivery) message() Message { return Message{ID: "m"} }
func (f fakeDelivery) ack() error       { *f.steps = append(*f.steps, "ack"); return f.err }
func (f fakeDelivery) drop() error      { *f.steps = append(*f.steps, "drop"); return f.err }
func (f fakeDelivery) retry(context.Context) error {
	*f.steps = append(*f.steps, "retry")
	return f.err
}

func TestHandleSettles(t *testing.T) {
	lost := errors.New("link down")
	tests := []struct {
		name     string
		ackFirst bool
		cancel   bool // Run's context ends while the handler runs
		decide   func() Decision
		err      error
		want     []string
	}{
		{"ack", false, false, func() Decision { return Ack }, nil, []string{"handler", "ack", "settled ack <nil>"}},
		{"retry", false, false, func() Decision { return Retry }, nil, []string{"handler", "retry", "settled retry <nil>"}},
		{"drop", false, false, func() Decision { return Drop }, nil, []string{"handler", "drop", "settled drop <nil>"}},
		{"unknown decision retries", false, false, func() Decision { return Decision(9) }, nil,
			[]string{"handler", "retry", "settled Decision(9) <nil>"}},
		{"panic retries", false, false, func() Decision { panic("boom") }, nil, []string{"handler", "retry", "settled retry <nil>"}},
		{"lost ack is reported", false, false, func() Decision { return Ack }, lost,
			[]string{"handler", "ack", "settled ack link down"}},
		{"end of run settles nothing", false, true, func() Decision { return Ack }, nil, []string{"handler"}},
		{"ack first", true, false, func() Decision { return Retry }, nil, []string{"ack", "settled ack <nil>", "handler"}},
		{"ack first, end of run", true, true, func() Decision { return Ack }, nil, []string{"ack", "settled ack <nil>", "handler"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var steps []string
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts, err := Options{Broker: AMQP, Queue: "q", AckFirst: tt.ackFirst,
				Settled: func(_ Message, d Decision, err error) {
					steps = append(steps, "settled "+d.String()+" "+errString(err))
				}}.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			c := newConsumer(opts, func(context.Context, Message) Decision {
				steps = append(steps, "handler")
				if tt.cancel {
					cancel()
				}
				return tt.decide()
			})
			c.handle(ctx, fakeDelivery{steps: &steps, err: tt.err})
			if !reflect.DeepEqual(steps, tt.want) {
				t.Errorf("steps = %q, want %q", steps, tt.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestReadyOnce(t *testing.T) {
	n := 0
	c := newConsumer(Options{Ready: func() { n++ }}, nil)
	c.consuming()
	c.consuming()
	if n != 1 {
		t.Errorf("Ready called %d times, want 1", n)
	}
}
