package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// running is one Run on its own goroutine.
type running struct {
	cancel context.CancelFunc
	done   chan error
	log    *testLog
	once   sync.Once
}

// start runs Run with opts and h, and waits until it is consuming.
func start(t *testing.T, opts Options, h Handler) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), log: newTestLog(t)}
	ready := make(chan struct{})
	opts.Ready = func() { close(ready) }
	opts.Logf = r.log.logf
	go func() { r.done <- Run(ctx, opts, h) }()
	t.Cleanup(func() { r.stop(t) })
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("Run returned before consuming: %v", err)
	case <-time.After(waitLimit):
		t.Fatalf("Run not consuming after %v; log:\n%s", waitLimit, r.log)
	}
	return r
}

// stop cancels Run (as a crash would cut it short) and waits for it to return nil.
func (r *running) stop(t *testing.T) {
	r.once.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("Run still running %v after its context ended", waitLimit)
		}
		r.log.close()
	})
}

// testLog collects Run's log lines, passes them to t.Log while the test runs, and lets a test
// wait for a line.
type testLog struct {
	t       *testing.T
	mu      sync.Mutex
	lines   []string
	closed  bool
	changed chan struct{}
}

func newTestLog(t *testing.T) *testLog {
	return &testLog{t: t, changed: make(chan struct{}, 1)}
}

func (l *testLog) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.lines = append(l.lines, line)
	l.t.Log("run: " + line)
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *testLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waitLine waits for a line containing all of parts.
func (l *testLog) waitLine(t *testing.T, parts ...string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		l.mu.Lock()
		found := slices.ContainsFunc(l.lines, func(line string) bool {
			for _, p := range parts {
				if !strings.Contains(line, p) {
					return false
				}
			}
			return true
		})
		l.mu.Unlock()
		if found {
			return
		}
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("no log line with %q after %v; log:\n%s", parts, waitLimit, l)
		}
	}
}
