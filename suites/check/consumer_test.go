package check

import (
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The hand-written histories of the consumer checkers' tests are about one consumer, webhooks,
// and its events evt_1, evt_2, ... (evt_1 unless a helper names another).
const (
	testConsumer = "webhooks"
	testEvent    = "evt_1"
)

// delivery is a webhook delivery of the test event answered with status, seq seconds after t0.
func delivery(seq int64, status int) history.Attempt { return deliveryOf(testEvent, seq, status) }

// deliveryOf is a webhook delivery of event key answered with status.
func deliveryOf(key string, seq int64, status int) history.Attempt {
	start := t0.Add(time.Duration(seq) * time.Second)
	return history.Attempt{Seq: seq, Op: testConsumer, Key: key, Method: "POST", URL: "http://127.0.0.1:8090/webhooks",
		Status: status, Outcome: history.OK, Start: start, End: start.Add(10 * time.Millisecond)}
}

// lostDelivery is a webhook delivery of the test event that got no answer.
func lostDelivery(seq int64) history.Attempt { return lostDeliveryOf(testEvent, seq) }

// lostDeliveryOf is a webhook delivery of event key that got no answer.
func lostDeliveryOf(key string, seq int64) history.Attempt {
	start := t0.Add(time.Duration(seq) * time.Second)
	return history.Attempt{Seq: seq, Op: testConsumer, Key: key, Method: "POST", URL: "http://127.0.0.1:8090/webhooks",
		Outcome: history.Unknown, Err: "EOF", Start: start, End: start.Add(time.Second)}
}

// publication is a publication of event key on a broker, confirmed (or, with outcome, not).
func publication(key string, seq int64, outcome ...history.Outcome) history.Attempt {
	start := t0.Add(time.Duration(seq) * time.Second)
	a := history.Attempt{Seq: seq, Op: testConsumer, Key: key, Method: published, URL: "amqp://127.0.0.1:5672/x/k",
		Outcome: history.OK, Note: "published: the broker confirmed it", Start: start, End: start.Add(time.Millisecond)}
	if len(outcome) > 0 {
		a.Outcome, a.Note, a.Err = outcome[0], "", "no confirm from the broker"
	}
	return a
}

// effects is a taken count of the test event's effects.
func effects(n int) Count { return effectsOf(testEvent, n) }

// effectsOf is a taken count of event key's effects.
func effectsOf(key string, n int) Count {
	return Count{Op: testConsumer, Ref: key, Key: key, N: n, Taken: true}
}

// effectsFailed is a count of the test event's effects the observer could not take.
func effectsFailed() Count {
	return Count{Op: testConsumer, Ref: testEvent, Key: testEvent, Err: "connection refused", Taken: true}
}

// redeliveries are redeliveries given 5s to be acknowledged.
func redeliveries(as ...history.Attempt) Eventually {
	return Eventually{Attempts: as, Within: 5 * time.Second}
}

func TestInFlight(t *testing.T) {
	for status, want := range map[int]bool{409: true, 200: false, 429: false, 503: false} {
		if got := InFlight(status); got != want {
			t.Errorf("InFlight(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestRedelivery(t *testing.T) {
	three := []history.Attempt{delivery(1, 200), delivery(2, 200), delivery(3, 200)}
	tests := []struct {
		name       string
		deliveries []history.Attempt
		effects    Count
		verdict    reports.Verdict
		want       []string
	}{
		{"acknowledged every time, one effect", three, effects(1), reports.Pass, nil},
		{"every delivery took effect", three, effects(3), reports.Fail, []string{"duplicate-record seqs=1,2,3"}},
		{"acknowledged, never applied", three, effects(0), reports.Fail, []string{"dropped-event seqs=1,2,3"}},
		{"a redelivery refused", []history.Attempt{delivery(1, 200), delivery(2, 400)}, effects(1), reports.Fail, []string{"wrong-status seqs=2"}},
		{"published three times, one effect", []history.Attempt{publication(testEvent, 1), publication(testEvent, 2)}, effects(1), reports.Pass, nil},
		{"no answer, no effect", []history.Attempt{lostDelivery(1)}, effects(0), reports.Unknown, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, Redelivery(tt.deliveries, tt.effects), tt.verdict, tt.want)
		})
	}
}

func TestRedelivered(t *testing.T) {
	tests := []struct {
		name    string
		ev      Eventually
		ok      bool
		verdict reports.Verdict
		want    []string
	}{
		{"acknowledged after the in-flight status", redeliveries(delivery(2, 409), lostDelivery(3), delivery(4, 200)), true, reports.Pass, nil},
		{"still in flight at the end", redeliveries(delivery(2, 409), delivery(3, 409)), false, reports.Fail, []string{"stuck-key seqs=2,3"}},
		{"a 5xx", redeliveries(delivery(2, 503)), false, reports.Fail, []string{"server-error seqs=2"}},
		{"not redelivered", redeliveries(), false, reports.Unknown, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJudge(consumerProfile)
			if ok := j.redelivered(tt.ev, "the redelivery"); ok != tt.ok {
				t.Errorf("redelivered = %v, want %v", ok, tt.ok)
			}
			expect(t, j.result(), tt.verdict, tt.want)
		})
	}
}
