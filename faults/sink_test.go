package faults

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// sinkAnswer is what a caller of the sink saw.
type sinkAnswer struct {
	status   int
	body     string
	replayed bool
}

func newSinkT(t *testing.T, keyHeader string) *Sink {
	t.Helper()
	s, err := NewSink("", keyHeader)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// charge calls the sink as the reference API does: a POST with a key header and a JSON body.
func charge(ctx context.Context, s *Sink, key, ref string) (sinkAnswer, error) {
	body := fmt.Sprintf(`{"tenant":"t1","operation":"orders","ref":%q,"amount":1000,"currency":"EUR"}`, ref)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/charges", strings.NewReader(body))
	if err != nil {
		return sinkAnswer{}, err
	}
	if key != "" {
		req.Header.Set(s.KeyHeader(), key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sinkAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return sinkAnswer{resp.StatusCode, string(b), resp.Header.Get("Idempotent-Replayed") == "true"}, err
}

func mustCharge(t *testing.T, s *Sink, key, ref string) sinkAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := charge(ctx, s, key, ref)
	if err != nil {
		t.Fatalf("charge %s/%s: %v", key, ref, err)
	}
	return a
}

func TestSinkDeduplicatesByKey(t *testing.T) {
	s := newSinkT(t, "")
	first := mustCharge(t, s, "k1", "order-1")
	again := mustCharge(t, s, "k1", "order-1")
	other := mustCharge(t, s, "k2", "order-2")
	if first.status != http.StatusOK || first.replayed {
		t.Errorf("first call: %+v, want 200, not replayed", first)
	}
	if again.body != first.body || again.status != first.status || !again.replayed {
		t.Errorf("same key again: %+v, want the stored answer %q, replayed", again, first.body)
	}
	if other.body == first.body {
		t.Errorf("another key got the first key's answer %q", other.body)
	}
	if got, want := s.Effects(), 2; got != want {
		t.Errorf("Effects() = %d, want %d", got, want)
	}
	if got := s.EffectsForRef("order-1"); got != 1 {
		t.Errorf("EffectsForRef(order-1) = %d, want 1", got)
	}
	calls := s.CallsFor("order-1")
	if len(calls) != 2 || calls[0].Key != "k1" || calls[0].Method != http.MethodPost ||
		calls[0].Path != "/v1/charges" || !calls[0].Effect || calls[1].Effect || !calls[1].Replayed {
		t.Errorf("CallsFor(order-1) = %+v, want an effect then a replay, both POST /v1/charges with key k1", calls)
	}
	if len(s.Calls()) != 3 {
		t.Errorf("Calls() has %d calls, want 3", len(s.Calls()))
	}
}

func TestSinkKeylessCallsAreEachAnEffect(t *testing.T) {
	s := newSinkT(t, "")
	mustCharge(t, s, "", "order-1")
	mustCharge(t, s, "", "order-1")
	if got := s.EffectsForRef("order-1"); got != 2 {
		t.Errorf("two calls without a key: %d effects, want 2", got)
	}
}

func TestSinkKeyHeader(t *testing.T) {
	s := newSinkT(t, "x-downstream-key")
	mustCharge(t, s, "k1", "order-1")
	mustCharge(t, s, "k1", "order-1")
	calls := s.Calls()
	if s.KeyHeader() != "X-Downstream-Key" || calls[0].Key != "k1" || s.Effects() != 1 {
		t.Errorf("custom key header: header %s, calls %+v, effects %d; want k1 read from X-Downstream-Key, 1 effect",
			s.KeyHeader(), calls, s.Effects())
	}
}

func TestSinkFailNext(t *testing.T) {
	s := newSinkT(t, "")
	s.FailNext(2, http.StatusBadGateway)
	var got []int
	for range 3 {
		got = append(got, mustCharge(t, s, "k1", "order-1").status)
	}
	want := []int{http.StatusBadGateway, http.StatusBadGateway, http.StatusOK}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if s.Effects() != 1 {
		t.Errorf("Effects() = %d, want 1 (failed calls perform nothing)", s.Effects())
	}
	s.FailNext(1, 200)
	if a := mustCharge(t, s, "k2", "order-2"); a.status != http.StatusServiceUnavailable {
		t.Errorf("FailNext with status 200: got %d, want 503", a.status)
	}
}

func TestSinkDelay(t *testing.T) {
	s := newSinkT(t, "")
	const d = 150 * time.Millisecond
	s.Delay(d)
	start := time.Now()
	mustCharge(t, s, "k1", "order-1")
	if took := time.Since(start); took < d-timingSlack {
		t.Errorf("delayed call took %v, want at least %v", took, d)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := charge(ctx, s, "k2", "order-2"); err == nil {
		t.Fatal("a client with a 50ms timeout got an answer delayed by 150ms")
	}
	wait, cancelWait := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelWait()
	if _, err := s.WaitCalls(wait, 2); err != nil {
		t.Fatal(err)
	}
	if got := s.EffectsForRef("order-2"); got != 1 {
		t.Errorf("the call whose client timed out performed %d effects, want 1 (work done, answer lost)", got)
	}
	s.Delay(0)
	start = time.Now()
	mustCharge(t, s, "k3", "order-3")
	if took := time.Since(start); took >= d {
		t.Errorf("after Delay(0) a call took %v", took)
	}
}

func TestSinkConcurrentCalls(t *testing.T) {
	s := newSinkT(t, "")
	const keys, perKey = 8, 6
	var wg sync.WaitGroup
	answers := make([][]sinkAnswer, keys)
	var mu sync.Mutex
	for k := range keys {
		for range perKey {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				a, err := charge(ctx, s, fmt.Sprintf("k%d", k), fmt.Sprintf("order-%d", k))
				if err != nil {
					t.Errorf("charge k%d: %v", k, err)
				}
				mu.Lock()
				answers[k] = append(answers[k], a)
				mu.Unlock()
			})
		}
	}
	wg.Go(func() { // behaviour changes while calls run
		for range 20 {
			s.Delay(time.Millisecond)
			s.Delay(0)
			_ = s.Held()
		}
	})
	wg.Wait()
	if got := s.Effects(); got != keys {
		t.Errorf("Effects() = %d, want %d (one per key)", got, keys)
	}
	if got := len(s.Calls()); got != keys*perKey {
		t.Errorf("%d calls recorded, want %d", got, keys*perKey)
	}
	for k, as := range answers {
		for _, a := range as {
			if a.body != as[0].body {
				t.Errorf("key k%d: answers differ: %q and %q", k, a.body, as[0].body)
			}
		}
	}
}

func TestSinkCloseFreesPort(t *testing.T) {
	s := newSinkT(t, "")
	mustCharge(t, s, "k1", "order-1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	refused(t, strings.TrimPrefix(s.URL(), "http://"))
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSinkListenTaken(t *testing.T) {
	s := newSinkT(t, "")
	addr := strings.TrimPrefix(s.URL(), "http://")
	if _, err := NewSink(addr, ""); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("NewSink on a busy address: err %v, want an error naming %s", err, addr)
	}
}
