package framework

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestStallWatchSumsTheStallsWithinASpan(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := &StallWatch{stalls: [][2]time.Time{{at(10), at(30)}, {at(50), at(60)}, {at(100), at(180)}}}
	tests := []struct {
		name     string
		from, to int
		want     time.Duration
	}{
		{"every stall inside", 0, 200, 110 * time.Millisecond},
		{"partly overlapping", 20, 120, 40 * time.Millisecond},
		{"between stalls", 31, 49, 0},
		{"inside one stall", 120, 130, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := w.Within(at(tt.from), at(tt.to)); got != tt.want {
			t.Errorf("%s: Within(%d, %d) = %v, want %v", tt.name, tt.from, tt.to, got, tt.want)
		}
	}
	if got := (*StallWatch)(nil).Within(at(0), at(200)); got != 0 {
		t.Errorf("a nil watch saw %v", got)
	}
}

// A process that is not running (here stopped by SIGSTOP for 100 ms by a child, which then
// continues it) is a stall the watch records.
func TestStallWatchSeesTheProcessStopped(t *testing.T) {
	w := WatchStalls()
	defer w.Stop()
	time.Sleep(20 * time.Millisecond)
	from := time.Now()
	stopper := exec.Command("sh", "-c", fmt.Sprintf("kill -STOP %d; sleep 0.1; kill -CONT %d", os.Getpid(), os.Getpid()))
	if err := stopper.Run(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	w.Stop()
	if got := w.Within(from, time.Now()); got < 80*time.Millisecond {
		t.Errorf("the watch saw %v of stall across a 100 ms SIGSTOP, want at least 80ms", got)
	}
}
