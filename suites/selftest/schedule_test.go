package selftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gauge tracks how many jobs of a kind run at once, and the most it saw.
type gauge struct{ now, peak atomic.Int32 }

func (g *gauge) enter() {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

func TestSchedulerPhasesAndLimits(t *testing.T) {
	var all, pg, serial gauge
	var order []string
	var mu sync.Mutex
	parallelStarted := atomic.Bool{}
	serialAfterParallel := atomic.Bool{}
	mk := func(name, phase string, pgJob bool) *job {
		return &job{name: name, phase: phase, pg: pgJob, isCell: true, run: func(ctx context.Context) ([]Correct, *Cell, error) {
			all.enter()
			defer all.leave()
			if pgJob {
				pg.enter()
				defer pg.leave()
			}
			if phase == PhaseSerial {
				serial.enter()
				defer serial.leave()
				if parallelStarted.Load() {
					serialAfterParallel.Store(true)
				}
			} else {
				parallelStarted.Store(true)
			}
			fmt.Fprintf(logOf(ctx), "log of %s\n", name)
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return nil, &Cell{Mutant: name, Result: Killed}, nil
		}}
	}
	var plan []*job
	for i := range 12 {
		plan = append(plan, mk(fmt.Sprintf("p%d", i), PhaseParallel, i%2 == 0))
	}
	for i := range 3 {
		plan = append(plan, mk(fmt.Sprintf("s%d", i), PhaseSerial, false))
	}
	dir := t.TempDir()
	s := &scheduler{parallel: 4, pgSlots: 2, logDir: dir, progress: io.Discard}
	if err := s.run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if got := all.peak.Load(); got != 4 {
		t.Errorf("at most %d jobs ran at once, want 4", got)
	}
	if got := pg.peak.Load(); got > 2 {
		t.Errorf("%d jobs on PostgreSQL ran at once, want at most 2", got)
	}
	if got := serial.peak.Load(); got != 1 {
		t.Errorf("%d serial jobs ran at once, want 1", got)
	}
	if serialAfterParallel.Load() {
		t.Error("a serial job ran after the parallel phase had started")
	}
	if len(order) != len(plan) || !strings.HasPrefix(order[0], "s") {
		t.Errorf("jobs ran in order %v: want every job, the serial ones first", order)
	}

	for _, j := range plan {
		if j.cell == nil || j.cell.Phase != j.phase || j.cell.Log == "" {
			t.Fatalf("job %s: cell %+v, want its result with its phase and log", j.name, j.cell)
		}
		data, err := os.ReadFile(j.cell.Log)
		if err != nil || !strings.Contains(string(data), "log of "+j.name) {
			t.Errorf("job %s: log %s holds %q (%v), want its own lines", j.name, j.cell.Log, data, err)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(logs) != len(plan) {
		t.Errorf("%d log files, want one per job (%d)", len(logs), len(plan))
	}
	if s.phaseSeconds[PhaseSerial] <= 0 || s.phaseSeconds[PhaseParallel] <= 0 {
		t.Errorf("phase seconds %v, want both phases timed", s.phaseSeconds)
	}
}

func TestNextJobPrefersPostgreSQLWhileASlotIsFree(t *testing.T) {
	a, b, c := &job{name: "a"}, &job{name: "pg1", pg: true}, &job{name: "pg2", pg: true}
	tests := []struct {
		name    string
		pending []*job
		pgFree  bool
		want    int
	}{
		{"a slot free: the first job on PostgreSQL", []*job{a, b, c}, true, 1},
		{"no slot free: the first job not on it", []*job{a, b, c}, false, 0},
		{"no slot free, only jobs on it", []*job{b, c}, false, -1},
		{"a slot free, none on it", []*job{a}, true, 0},
		{"nothing pending", nil, true, -1},
	}
	for _, tt := range tests {
		if got := nextJob(tt.pending, tt.pgFree); got != tt.want {
			t.Errorf("%s: nextJob = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestSchedulerStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var started atomic.Int32
	var plan []*job
	for i := range 20 {
		plan = append(plan, &job{name: fmt.Sprintf("j%d", i), phase: PhaseParallel, run: func(ctx context.Context) ([]Correct, *Cell, error) {
			started.Add(1)
			if i == 0 {
				return nil, nil, boom
			}
			select { // the others wait for the stop
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			return nil, &Cell{}, nil
		}})
	}
	s := &scheduler{parallel: 3, pgSlots: 1, progress: io.Discard}
	start := time.Now()
	err := s.run(context.Background(), plan)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "j0") {
		t.Fatalf("run = %v, want j0's error", err)
	}
	if n := started.Load(); n > 3 {
		t.Errorf("%d jobs started, want no new one after the error", n)
	}
	if time.Since(start) > 3*time.Second {
		t.Error("the running jobs were not stopped")
	}
}

func TestSchedulerStatusLine(t *testing.T) {
	s := &scheduler{running: map[*job]time.Time{}, total: 5, done: 2}
	s.running[&job{name: "slow one"}] = time.Now().Add(-20 * time.Second)
	s.running[&job{name: "quick one"}] = time.Now()
	got := s.line()
	if !strings.Contains(got, "2 done, 2 running, 1 left") || !strings.Contains(got, "longest running: slow one (20s)") {
		t.Errorf("status line %q", got)
	}
}
