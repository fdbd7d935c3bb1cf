package faults

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The receiver answers a POSTed event with 204 and hands it over whole; it refuses anything
// else and, once closed, takes nothing.
func TestEventReceiver(t *testing.T) {
	var mu sync.Mutex
	var got []Received
	r, err := NewEventReceiver("", func(ev Received) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, r.URL()+"/events/orders", strings.NewReader(`{"id":"evt_1"}`))
	req.Header.Set("Event-Id", "evt_1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST: %v, %v", resp, err)
	}
	resp.Body.Close()
	if resp, err := http.Get(r.URL() + "/events/orders"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v, %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	r.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Path != "/events/orders" || string(got[0].Body) != `{"id":"evt_1"}` || got[0].Header.Get("Event-Id") != "evt_1" || got[0].At.IsZero() {
		t.Errorf("received %+v", got)
	}
	if _, err := http.Post(r.URL()+"/", "application/json", strings.NewReader("{}")); err == nil {
		t.Error("a closed receiver took a delivery")
	}
}

// In a chain the receiver passes each delivery on to the consumer, body and headers as they
// came, and answers the API as the consumer answered: its 2xx, its 5xx, and 502 when the consumer
// gave no answer (the API's to deliver again). It still observes every delivery.
func TestEventReceiverPassOnChain(t *testing.T) {
	var mu sync.Mutex
	status := http.StatusOK
	var passed []string
	consumer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		passed = append(passed, req.URL.Path+" "+req.Header.Get("Webhook-Id")+" "+req.Header.Get("Webhook-Signature")+" "+string(body))
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(status)
	}))
	defer consumer.Close()
	observed := 0
	r, err := NewEventReceiver("", func(Received) {
		mu.Lock()
		defer mu.Unlock()
		observed++
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var answered []int
	r.PassOn(consumer.URL+"/webhooks", func(got Received, status int) {
		mu.Lock()
		defer mu.Unlock()
		if string(got.Body) == `{"id":"evt_1"}` {
			answered = append(answered, status)
		}
	})
	deliver := func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, r.URL()+"/events", strings.NewReader(`{"id":"evt_1"}`))
		req.Header.Set("Webhook-Id", "evt_1")
		req.Header.Set("Webhook-Signature", "v1,c2ln")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	got := []string{}
	for _, s := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		mu.Lock()
		status = s
		mu.Unlock()
		code, retry := deliver()
		got = append(got, fmt.Sprint(code, " ", retry))
	}
	consumer.Close()
	code, _ := deliver()
	got = append(got, fmt.Sprint(code))
	r.PassOn("", nil)
	code, _ = deliver()
	got = append(got, fmt.Sprint(code))
	if want := []string{"200 1", "503 1", "502", "204"}; !slices.Equal(got, want) {
		t.Errorf("the API was answered %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	want := `/webhooks evt_1 v1,c2ln {"id":"evt_1"}`
	if len(passed) != 2 || passed[0] != want || passed[1] != want || observed != 4 {
		t.Errorf("passed on %q (want twice %q), observed %d (want 4)", passed, want, observed)
	}
	if want := []int{200, 503, 0}; !slices.Equal(answered, want) {
		t.Errorf("told the consumer's answers %v, want %v", answered, want)
	}
}
