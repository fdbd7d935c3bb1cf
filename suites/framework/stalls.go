package framework

import (
	"sync"
	"time"
)

// Bounds of the stall watch.
const (
	// stallTick is how often the stall watch asks to be woken.
	stallTick = 2 * time.Millisecond
	// stallMin is how late a wake-up must come to count as a stall: shorter delays are the
	// scheduler's ordinary noise.
	stallMin = 5 * time.Millisecond
)

// StallWatch notes when the harness's process was not running: a goroutine that asks to be woken
// every 2 ms and records each wake-up that came at least 5 ms late, from when it was due to when
// it came. A loaded machine (a runner's other jobs, the garbage collector, the race detector)
// stalls every process on it: a delay measured across a stall says as much about the machine
// as about the client, which is what Within lets a judgement set aside. It is safe for
// concurrent use.
type StallWatch struct {
	mu     sync.Mutex
	stalls [][2]time.Time // [due, came], in order
	stop   chan struct{}
	done   chan struct{}
}

// WatchStalls starts a stall watch; Stop ends it.
func WatchStalls() *StallWatch {
	w := &StallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go w.watch()
	return w
}

func (w *StallWatch) watch() {
	defer close(w.done)
	t := time.NewTicker(stallTick)
	defer t.Stop()
	due := time.Now().Add(stallTick)
	for {
		select {
		case <-w.stop:
			return
		case now := <-t.C:
			if now = time.Now(); now.Sub(due) >= stallMin {
				w.mu.Lock()
				w.stalls = append(w.stalls, [2]time.Time{due, now})
				w.mu.Unlock()
			}
			due = now.Add(stallTick)
		}
	}
}

// Stop ends the watch; what it saw stays readable. Stop is idempotent.
func (w *StallWatch) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// Within returns how long the process was stalled between from and to (the stalls' overlap
// with that span); 0 for a nil watch.
func (w *StallWatch) Within(from, to time.Time) time.Duration {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var sum time.Duration
	for _, s := range w.stalls {
		if a, b := later(s[0], from), earlier(s[1], to); b.After(a) {
			sum += b.Sub(a)
		}
	}
	return sum
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
