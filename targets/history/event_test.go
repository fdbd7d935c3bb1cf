package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

func TestEventsRedactedInTimeOrder(t *testing.T) {
	h := history.New(history.NewRedactor([]string{"tok-123"}, nil))
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h.AddEvent(history.Event{At: t0.Add(2 * time.Second), Action: "heal", Kind: "kill", Target: "instance 0"})
	h.AddEvent(history.Event{At: t0, Action: "inject", Kind: "kill", Target: "instance 0",
		Fault: "kill with tok-123", Err: "dial tok-123: refused"})
	got := h.Events()
	if len(got) != 2 || !got[0].At.Equal(t0) || got[1].Action != "heal" {
		t.Fatalf("Events() = %+v, want the inject at t0 first, then the heal", got)
	}
	if strings.Contains(got[0].Fault+got[0].Err, "tok-123") {
		t.Errorf("stored event leaks the secret: %+v", got[0])
	}
	if s := got[0].String(); !strings.Contains(s, "inject kill (instance 0): dial [REDACTED]: refused") {
		t.Errorf("String() = %q", s)
	}
}

func TestInFlightAt(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a := history.Attempt{Start: t0, End: t0.Add(time.Second)}
	for _, tt := range []struct {
		at   time.Duration
		want bool
	}{{-time.Nanosecond, false}, {0, true}, {500 * time.Millisecond, true}, {time.Second, true}, {time.Second + time.Nanosecond, false}} {
		if got := a.InFlightAt(t0.Add(tt.at)); got != tt.want {
			t.Errorf("InFlightAt(start%+v) = %v, want %v", tt.at, got, tt.want)
		}
	}
}
