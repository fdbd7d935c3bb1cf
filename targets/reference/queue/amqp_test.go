package queue

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestAMQPHandlesEachMessageOnce(t *testing.T) {
	t.Parallel()
	topo, pub := amqpQueue(t)
	var inFlight, most atomic.Int32
	rec := newRecorder()
	opts := amqpOptions(topo)
	opts.Prefetch = 4
	opts.Settled = rec.settle
	r := start(t, opts, func(ctx context.Context, m Message) Decision {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for old := most.Load(); n > old && !most.CompareAndSwap(old, n); old = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		return rec.acking(ctx, m)
	})
	all := ids("m", 20)
	publish(t, pub, all...)
	rec.waitAcked(t, all)
	r.stop(t) // closing the link would requeue anything unacknowledged

	checkEachOnce(t, rec, all)
	if got := most.Load(); got < 2 || got > int32(opts.Prefetch) {
		t.Errorf("at most %d handlers ran at a time, want 2-%d", got, opts.Prefetch)
	}
	if s, err := topo.State(testContext(t)); err != nil || s.Ready != 0 {
		t.Errorf("queue after the run: %+v, %v; want nothing left (every message acked)", s, err)
	}
}

func TestAMQPRetryRedelivers(t *testing.T) {
	t.Parallel()
	topo, pub := amqpQueue(t)
	rec := newRecorder()
	var retried atomic.Int64 // when the handler returned Retry, Unix nanoseconds
	start(t, amqpOptions(topo), func(_ context.Context, m Message) Decision {
		rec.record(m)
		if len(rec.deliveries(m.ID)) == 1 {
			retried.Store(time.Now().UnixNano())
			return Retry
		}
		return Ack
	})
	publish(t, pub, "r")
	d := rec.waitDeliveries(t, "r", 2)
	if d[0].Redelivered || !d[1].Redelivered {
		t.Errorf("redelivered flags %v, %v; want false, true", d[0].Redelivered, d[1].Redelivered)
	}
	latency := d[1].at.Sub(time.Unix(0, retried.Load()))
	t.Logf("AMQP redelivery after Retry: %v (retry delay %v)", latency, DefaultRetryDelay)
	if latency < DefaultRetryDelay {
		t.Errorf("redelivered %v after Retry, before the %v retry delay", latency, DefaultRetryDelay)
	}
}

// A dropped message is rejected without requeue: a later message is handled and it is not.
func TestAMQPDropDiscards(t *testing.T) {
	t.Parallel()
	topo, pub := amqpQueue(t)
	rec := newRecorder()
	opts := amqpOptions(topo)
	opts.Prefetch = 1
	r := start(t, opts, func(_ context.Context, m Message) Decision {
		rec.record(m)
		if m.ID == "drop" {
			return Drop
		}
		return Ack
	})
	publish(t, pub, "drop", "after")
	rec.waitDeliveries(t, "after", 1)
	r.stop(t)
	if n := len(rec.deliveries("drop")); n != 1 {
		t.Errorf("dropped message delivered %d times, want 1", n)
	}
	if s, err := topo.State(testContext(t)); err != nil || s.Ready != 0 {
		t.Errorf("queue after the run: %+v, %v; want empty", s, err)
	}
}

// The link is cut while the handler works: its ack is lost, Run reconnects once the link is
// back, and the broker delivers the message again.
func TestAMQPLostAckRedeliveredAfterReconnect(t *testing.T) {
	t.Parallel()
	topo, pub := amqpQueue(t)
	proxy, proxied := brokerProxy(t, topo.URL)
	b := newBlocker("lost")
	opts := amqpOptions(topo)
	opts.URL = proxied
	r := start(t, opts, b.handle)
	publish(t, pub, "lost")
	b.waitEntered(t)

	cut := proxy.Disable()
	inject(t, cut)
	cutAt := time.Now()
	r.log.waitLine(t, "link lost")
	close(b.release) // the handler commits and acks on the dead link
	r.log.waitLine(t, `ack of message "lost" lost`)
	r.log.waitLine(t, "connect:", "refused", "reconnecting in") // Run keeps trying
	heal(t, cut)
	healedAt := time.Now()
	d := b.waitDeliveries(t, "lost", 2)
	if !d[1].Redelivered {
		t.Errorf("second delivery not flagged redelivered: %+v", d[1])
	}
	t.Logf("AMQP redelivery after a cut link: %v after the heal, %v after the cut", d[1].at.Sub(healedAt), d[1].at.Sub(cutAt))

	publish(t, pub, "after")
	b.waitDeliveries(t, "after", 1)
	r.stop(t)
	if s, err := topo.State(testContext(t)); err != nil || s.Ready != 0 {
		t.Errorf("queue after the run: %+v, %v; want empty", s, err)
	}
}

// Run cut short while the handler works (a crash): the correct consumer leaves the message on
// the queue, the ack-before-effect mutant has already acknowledged it and it is gone.
func TestAMQPCrashMidHandler(t *testing.T) {
	t.Parallel()
	for _, ackFirst := range []bool{false, true} {
		name := map[bool]string{false: "correct", true: "ack-first"}[ackFirst]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			topo, pub := amqpQueue(t)
			b := newBlocker("crash")
			opts := amqpOptions(topo)
			opts.AckFirst = ackFirst
			r := start(t, opts, b.handle)
			publish(t, pub, "crash")
			b.waitEntered(t)
			r.stop(t)

			wantReady := map[bool]int{false: 1, true: 0}[ackFirst]
			if s, err := topo.State(testContext(t)); err != nil || s.Ready != wantReady {
				t.Errorf("queue after the crash: %+v, %v; want %d ready", s, err, wantReady)
			}
			after := newRecorder()
			opts.AckFirst, opts.Prefetch = false, 1 // one at a time: a requeued message comes first
			start(t, opts, after.acking)
			publish(t, pub, "sentinel")
			after.waitDeliveries(t, "sentinel", 1)
			got := after.deliveries("crash")
			switch {
			case ackFirst && len(got) != 0:
				t.Errorf("ack-first: the crashed message was delivered again: %+v", got)
			case !ackFirst && (len(got) != 1 || !got[0].Redelivered):
				t.Errorf("correct: the crashed message was delivered %+v, want once, redelivered", got)
			}
		})
	}
}

func TestAMQPCompetingConsumersShare(t *testing.T) {
	t.Parallel()
	topo, pub := amqpQueue(t)
	checkCompetingConsumersShare(t, amqpOptions(topo), pub)
}

// A broker that does not answer yet is retried with the backoff until it does.
func TestAMQPConnectsOnceTheBrokerAnswers(t *testing.T) {
	t.Parallel()
	topo, pub := amqpQueue(t)
	proxy, proxied := brokerProxy(t, topo.URL)
	down := proxy.Disable()
	inject(t, down)
	rec := newRecorder()
	opts := amqpOptions(topo)
	opts.URL = proxied
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := newTestLog(t)
	defer log.close()
	ready := make(chan struct{})
	opts.Logf, opts.Ready = log.logf, func() { close(ready) }
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts, rec.acking) }()

	log.waitLine(t, "refused", "reconnecting in 100ms") // the second attempt failed too
	heal(t, down)
	select {
	case <-ready:
	case <-time.After(waitLimit):
		t.Fatalf("not consuming %v after the broker came back; log:\n%s", waitLimit, log)
	}
	publish(t, pub, "m")
	rec.waitDeliveries(t, "m", 1)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after its context ended")
	}
}
