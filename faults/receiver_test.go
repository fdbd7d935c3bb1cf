package faults

import (
	"net/http"
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
