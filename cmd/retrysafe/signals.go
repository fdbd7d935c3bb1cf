package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signalCatcher turns SIGINT and SIGTERM into a cancelled context and keeps catching them
// until stop, so that a second signal during clean-up does not kill retrysafe before the
// processes it started are stopped and the reports are written.
//
// While the properties run, Ginkgo's own handler sees the same signals: it abandons the
// running spec (marked interrupted) and skips the rest.
type signalCatcher struct {
	ch     chan os.Signal
	cancel context.CancelCauseFunc
	out    io.Writer

	mu     sync.Mutex
	first  os.Signal
	count  int
	closed chan struct{}
}

// catchSignals starts catching SIGINT and SIGTERM; messages go to out.
func catchSignals(parent context.Context, out io.Writer) (context.Context, *signalCatcher) {
	ctx, cancel := context.WithCancelCause(parent)
	s := &signalCatcher{ch: make(chan os.Signal, 4), cancel: cancel, out: out, closed: make(chan struct{})}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	go s.loop()
	return ctx, s
}

func (s *signalCatcher) loop() {
	for {
		select {
		case sig := <-s.ch:
			s.mu.Lock()
			s.count++
			n := s.count
			if n == 1 {
				s.first = sig
			}
			s.mu.Unlock()
			if n == 1 {
				fmt.Fprintf(s.out, "\nretrysafe: %s: stopping; stopping started processes and writing the reports gathered so far\n", signalName(sig))
				s.cancel(fmt.Errorf("interrupted by %s", signalName(sig)))
			} else {
				fmt.Fprintf(s.out, "retrysafe: %s again: still cleaning up (started processes are being stopped), please wait\n", signalName(sig))
			}
		case <-s.closed:
			return
		}
	}
}

// signalName names a signal as a person types it: SIGINT, SIGTERM.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// caught returns the first signal received, or nil.
func (s *signalCatcher) caught() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// stop stops catching: from now on a signal has its default effect.
func (s *signalCatcher) stop() {
	signal.Stop(s.ch)
	close(s.closed)
	s.cancel(nil)
}
