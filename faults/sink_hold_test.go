package faults

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// chargeAsync sends one charge in the background; the channel yields its outcome.
func chargeAsync(s *Sink, key, ref string) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a, err := charge(ctx, s, key, ref)
		if err == nil && a.status != http.StatusOK {
			err = errors.New(http.StatusText(a.status))
		}
		done <- err
	}()
	return done
}

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSinkHoldRelease(t *testing.T) {
	s := newSinkT(t, "")
	s.Hold()
	first, retry := chargeAsync(s, "k1", "order-1"), chargeAsync(s, "k1", "order-1")
	held, err := s.WaitHeld(waitCtx(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if held[0].Key != "k1" || held[0].Ref != "order-1" {
		t.Errorf("held call %+v, want key k1, ref order-1", held[0])
	}
	select {
	case err := <-first:
		t.Fatalf("a held call was answered (err %v)", err)
	default:
	}
	if s.Effects() != 0 || len(s.Calls()) != 0 {
		t.Errorf("while held: %d effects, %d calls; want none", s.Effects(), len(s.Calls()))
	}
	s.Release()
	for _, done := range []<-chan error{first, retry} {
		if err := <-done; err != nil {
			t.Errorf("released call: %v", err)
		}
	}
	if got := s.Effects(); got != 1 {
		t.Errorf("two held calls with one key performed %d effects, want 1", got)
	}
	if len(s.Held()) != 0 {
		t.Errorf("Held() after Release = %v, want none", s.Held())
	}
	mustCharge(t, s, "k2", "order-2") // no longer holding
}

func TestSinkWaitHeldTimesOut(t *testing.T) {
	s := newSinkT(t, "")
	s.Hold()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.WaitHeld(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitHeld with nothing held: err %v, want DeadlineExceeded", err)
	}
}

func TestSinkCloseWithHeldCall(t *testing.T) {
	s := newSinkT(t, "")
	s.Hold()
	done := chargeAsync(s, "k1", "order-1")
	if _, err := s.WaitHeld(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	waiter := make(chan error, 1)
	go func() { _, err := s.WaitHeld(context.Background(), 2); waiter <- err }()
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a held call")
	}
	<-done // the held call was released, whatever its outcome
	if err := <-waiter; !errors.Is(err, ErrSinkClosed) {
		t.Errorf("a WaitHeld pending during Close: err %v, want ErrSinkClosed", err)
	}
}

func TestSinkCloseCutsDelay(t *testing.T) {
	s := newSinkT(t, "")
	s.Delay(time.Hour)
	done := chargeAsync(s, "k1", "order-1")
	if _, err := s.WaitCalls(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	<-done
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close with an answer delayed by 1h took %v", took)
	}
}

func TestSinkFaults(t *testing.T) {
	s := newSinkT(t, "")
	n := NewNemesis()
	if err := n.Inject(waitCtx(t), s.HoldFault()); err != nil {
		t.Fatal(err)
	}
	done := chargeAsync(s, "k1", "order-1")
	if _, err := s.WaitHeld(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if err := n.Inject(waitCtx(t), s.DelayFault(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := n.HealAll(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("after HealAll the held call got %v, want its answer", err)
	}
}
