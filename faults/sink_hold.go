package faults

import (
	"context"
	"fmt"
	"time"
)

// Hold makes every call that arrives from now on wait, before anything is decided, until
// Release (or Close). The target is then between its claim of the key and its write: WaitHeld
// tells the harness when that moment has come.
func (s *Sink) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate == nil {
		s.gate = make(chan struct{})
	}
}

// Release lets every held call go on (each is then processed as usual) and stops holding new
// ones. Releasing a sink that holds nothing does nothing.
func (s *Sink) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate == nil {
		return
	}
	close(s.gate)
	s.gate, s.held = nil, nil
	s.notifyLocked()
}

// Held returns the calls waiting now.
func (s *Sink) Held() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneCalls(s.held)
}

// WaitHeld waits until at least n calls are being held and returns them.
func (s *Sink) WaitHeld(ctx context.Context, n int) ([]Call, error) {
	return s.waitFor(ctx, func() []Call { return s.held }, n, "held calls")
}

// waitWhileHeld blocks c while the sink holds calls. A held call whose client went away is
// still processed once released, as a real provider that received it would.
func (s *Sink) waitWhileHeld(c Call) {
	s.mu.Lock()
	gate := s.gate
	if gate == nil {
		s.mu.Unlock()
		return
	}
	s.held = append(s.held, c)
	s.notifyLocked()
	s.mu.Unlock()
	select {
	case <-gate:
	case <-s.closing:
	}
}

// HoldFault returns Hold and Release as a fault, so that a nemesis releases the sink at the end
// of every run.
func (s *Sink) HoldFault() Fault {
	return Func(KindHoldDownstream, "downstream", "downstream: hold", func(context.Context) error { s.Hold(); return nil },
		func(context.Context) error { s.Release(); return nil })
}

// DelayFault returns Delay(d) as a fault; healing answers at once again.
func (s *Sink) DelayFault(d time.Duration) Fault {
	return Func(KindDelayDownstream, "downstream", fmt.Sprintf("downstream: delay %v", d), func(context.Context) error { s.Delay(d); return nil },
		func(context.Context) error { s.Delay(0); return nil })
}

// FailFault returns FailNext(n, status) as a fault: the next n calls fail; healing stops failing
// calls that have not come yet.
func (s *Sink) FailFault(n, status int) Fault {
	return Func(KindFailDownstream, "downstream", fmt.Sprintf("downstream: fail the next %d calls with %d", n, status),
		func(context.Context) error { s.FailNext(n, status); return nil },
		func(context.Context) error { s.FailNext(0, 0); return nil })
}
