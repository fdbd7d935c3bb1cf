package queue

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/broker"
)

// Run creates the durable consumer when the harness did not.
func TestNATSHandlesEachMessageOnce(t *testing.T) {
	t.Parallel()
	topo, pub := natsStream(t, false)
	rec := newRecorder()
	opts := natsOptions(topo)
	opts.Settled = rec.settle
	r := start(t, opts, rec.acking)
	all := ids("m", 20)
	publish(t, pub, all...)
	rec.waitAcked(t, all)
	r.stop(t)
	checkEachOnce(t, rec, all)
	s, err := topo.ConsumerState(testContext(t))
	if err != nil || s.Pending != 0 || s.AckPending != 0 || s.Redelivered != 0 {
		t.Errorf("consumer after the run: %+v, %v; want nothing pending", s, err)
	}
}

func TestNATSRetryRedelivers(t *testing.T) {
	t.Parallel()
	topo, pub := natsStream(t, true)
	rec := newRecorder()
	var retried atomic.Int64
	start(t, natsOptions(topo), func(_ context.Context, m Message) Decision {
		rec.record(m)
		if len(rec.deliveries(m.ID)) == 1 {
			retried.Store(time.Now().UnixNano())
			return Retry
		}
		return Ack
	})
	publish(t, pub, "r")
	d := rec.waitDeliveries(t, "r", 2)
	if d[0].Redelivered || d[0].Attempt != 1 || !d[1].Redelivered || d[1].Attempt != 2 {
		t.Errorf("deliveries %+v; want attempt 1, then 2 redelivered", d)
	}
	latency := d[1].at.Sub(time.Unix(0, retried.Load()))
	t.Logf("JetStream redelivery after Retry (NAK with delay): %v (retry delay %v)", latency, DefaultRetryDelay)
	if latency < DefaultRetryDelay-10*time.Millisecond || latency >= topo.AckWait {
		t.Errorf("redelivered %v after Retry; want about the %v retry delay, before the %v AckWait", latency, DefaultRetryDelay, topo.AckWait)
	}
}

// A message that is not acknowledged within AckWait is delivered again, to the same consumer
// while the first delivery is still being handled.
func TestNATSAckWaitRedelivers(t *testing.T) {
	t.Parallel()
	topo, pub := natsStream(t, true)
	b := newBlocker("slow")
	start(t, natsOptions(topo), b.handle)
	publish(t, pub, "slow")
	d := b.waitDeliveries(t, "slow", 2)
	close(b.release)
	latency := d[1].at.Sub(d[0].at)
	t.Logf("JetStream redelivery after AckWait: %v (AckWait %v)", latency, topo.AckWait)
	if latency < topo.AckWait-50*time.Millisecond || !d[1].Redelivered {
		t.Errorf("second delivery %v after the first (redelivered %v); want after the %v AckWait", latency, d[1].Redelivered, topo.AckWait)
	}
}

func TestNATSDropTerminates(t *testing.T) {
	t.Parallel()
	topo, pub := natsStream(t, true)
	rec := newRecorder()
	opts := natsOptions(topo)
	opts.Settled = rec.settle
	r := start(t, opts, func(_ context.Context, m Message) Decision {
		rec.record(m)
		if m.ID == "drop" {
			return Drop
		}
		return Ack
	})
	publish(t, pub, "drop", "after")
	rec.waitAcked(t, []string{"after"})
	// The handlings run at once: "after" may be acked before "drop" was terminated, and a stop
	// then would close the link under the term (CI, cold cache: AckPending 1 ten seconds on).
	rec.waitSettled(t, Drop, []string{"drop"})
	r.stop(t)
	// Term, unlike DoubleAck, is not confirmed, and JetStream applies acks on a queue of its
	// own, so the state is read until the term shows or the wait ends.
	s, err := settledState(t, topo)
	if err != nil || s.AckPending != 0 || s.Pending != 0 {
		t.Errorf("consumer %v after the run: %+v, %v; want nothing pending (the dropped message terminated)", waitLimit, s, err)
	}
	if n := len(rec.deliveries("drop")); n != 1 {
		t.Errorf("dropped message delivered %d times, want 1", n)
	}
}

// The link is cut while the handler works: its ack fails, the client reconnects once the link
// is back, and the message is delivered again.
func TestNATSLostAckRedeliveredAfterReconnect(t *testing.T) {
	t.Parallel()
	topo, pub := natsStream(t, true)
	proxy, proxied := brokerProxy(t, topo.URL)
	b := newBlocker("lost")
	opts := natsOptions(topo)
	opts.URL = proxied
	r := start(t, opts, b.handle)
	publish(t, pub, "lost")
	b.waitEntered(t)

	cut := proxy.Disable()
	inject(t, cut)
	cutAt := time.Now()
	r.log.waitLine(t, "link lost")
	close(b.release)
	r.log.waitLine(t, `ack of message "lost" lost`)
	// Keep the link down past AckWait (a time, not an event: the server makes no delivery while
	// no pull is open), so that the redelivery waits for the reconnection alone.
	time.Sleep(time.Until(b.deliveries("lost")[0].at.Add(topo.AckWait + 250*time.Millisecond)))
	heal(t, cut)
	healedAt := time.Now()
	d := b.waitDeliveries(t, "lost", 2)
	// nats-server 2.9 may hand it back with a delivery count of 1: a redelivery it tried while
	// the link was down found no live pull, and it took the count back. Only the id is proof.
	t.Logf("second delivery: attempt %d, redelivered %v", d[1].Attempt, d[1].Redelivered)
	t.Logf("JetStream redelivery after a cut link: %v after the heal, %v after the cut (AckWait %v)",
		d[1].at.Sub(healedAt), d[1].at.Sub(cutAt), topo.AckWait)
	publish(t, pub, "after")
	b.waitDeliveries(t, "after", 1)
}

// Run cut short while the handler works: the correct consumer leaves the message pending and
// it is delivered again; the ack-before-effect mutant has acknowledged it and it is gone.
func TestNATSCrashMidHandler(t *testing.T) {
	t.Parallel()
	for _, ackFirst := range []bool{false, true} {
		name := map[bool]string{false: "correct", true: "ack-first"}[ackFirst]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			topo, pub := natsStream(t, true)
			b := newBlocker("crash")
			opts := natsOptions(topo)
			opts.AckFirst = ackFirst
			r := start(t, opts, b.handle)
			publish(t, pub, "crash")
			b.waitEntered(t)
			r.stop(t)

			s, err := topo.ConsumerState(testContext(t))
			wantPending := map[bool]int{false: 1, true: 0}[ackFirst]
			if err != nil || s.AckPending != wantPending || s.Pending != 0 {
				t.Fatalf("consumer after the crash: %+v, %v; want %d awaiting an ack, none undelivered", s, err, wantPending)
			}
			if ackFirst {
				return // acknowledged, never pending again: the broker will not redeliver it
			}
			after := newRecorder()
			opts.AckFirst = false
			start(t, opts, after.acking)
			if d := after.waitDeliveries(t, "crash", 1); !d[0].Redelivered || d[0].Attempt != 2 {
				t.Errorf("the crashed message came back as %+v, want attempt 2, redelivered", d[0])
			}
		})
	}
}

func TestNATSCompetingConsumersShare(t *testing.T) {
	t.Parallel()
	topo, pub := natsStream(t, true)
	checkCompetingConsumersShare(t, natsOptions(topo), pub)
}

// The broker's own dedupe drops an id published again within the stream's short duplicates
// window, and only then: published after it, the same id reaches the consumer again, which must
// deduplicate it itself.
func TestNATSDuplicatesWindowIsShort(t *testing.T) {
	t.Parallel()
	topo, pub := natsStream(t, true)
	rec := newRecorder()
	opts := natsOptions(topo)
	opts.Prefetch = 1 // in stream order
	start(t, opts, rec.acking)
	ctx := testContext(t)
	for i, body := range []string{"first", "within the window", "after the window", "sentinel"} {
		id := map[bool]string{false: "dup", true: "sentinel"}[body == "sentinel"]
		if body == "after the window" {
			if err := topo.WaitOutDuplicates(ctx); err != nil {
				t.Fatal(err)
			}
		}
		r, err := pub.Publish(ctx, broker.Message{ID: id, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if want := i == 1; r.Duplicate != want {
			t.Errorf("publish %q: duplicate %v, want %v", body, r.Duplicate, want)
		}
	}
	rec.waitDeliveries(t, "sentinel", 1)
	d := rec.deliveries("dup")
	if len(d) != 2 || string(d[0].Body) != "first" || string(d[1].Body) != "after the window" || d[1].Redelivered {
		t.Errorf("deliveries of dup: %+v; want \"first\" and \"after the window\", both first deliveries", d)
	}
}

// A durable consumer that filters another subject cannot be fixed by reconnecting: Run says so.
func TestNATSDurableOfAnotherSubjectIsAnError(t *testing.T) {
	t.Parallel()
	topo, _ := natsStream(t, true)
	opts := natsOptions(topo)
	opts.Subject = topo.Name + ".other"
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err := Run(ctx, opts, func(context.Context, Message) Decision { return Ack })
	if err == nil || !strings.Contains(err.Error(), topo.Subject) {
		t.Errorf("Run = %v, want an error naming the consumer's subject %q", err, topo.Subject)
	}
}
