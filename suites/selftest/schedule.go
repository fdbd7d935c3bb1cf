package selftest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// The phases a job runs in. The cells are independent (each in places of its own: spaces.go),
// so most run at once; a job whose verdict rests on timing that the load of the others would
// skew runs in the serial phase, alone, before the parallel phase starts.
const (
	PhaseSerial   = "serial"
	PhaseParallel = "parallel"
)

// serialSides are the sides whose runs go in the serial phase: the client side's,
// which judge a client's delays to the millisecond (backoff envelopes, Retry-After, hammering
// under 10 ms) on the timers of a client process the harness starts.
var serialSides = []string{SideClient}

// job is one unit of a self-test's work: one run of the correct reference (a set of properties
// on one store, shape and transport) or one mutant cell. Its results take its place in the
// matrix, in the order of the plan, whenever it ends.
type job struct {
	name   string // its log file's and its progress line's name
	phase  string
	pg     bool // it uses PostgreSQL: admitted within the connection budget
	isCell bool // a mutant cell (else a run of the correct reference)
	events bool // a row of the API's events (Options.OnlyEvents keeps only these)
	async  bool // a row of the asynchronous API (Options.OnlyAsync keeps only these)
	run    func(ctx context.Context) ([]Correct, *Cell, error)

	correct []Correct
	cell    *Cell
	seconds float64
	log     string // its log file ("" when logs are not kept)
}

// jobLogKey is the context key of a job's log writer (logOf).
type jobLogKey struct{}

// logOf returns the log of the job ctx belongs to (io.Discard when none).
func logOf(ctx context.Context) io.Writer {
	if w, ok := ctx.Value(jobLogKey{}).(io.Writer); ok {
		return w
	}
	return io.Discard
}

// scheduler runs a plan's jobs: the serial phase's one at a time, then the parallel phase's
// up to parallel at once, at most pgSlots of them on PostgreSQL.
type scheduler struct {
	parallel int
	pgSlots  int
	logDir   string    // each job's log goes to a file here ("" = nowhere)
	progress io.Writer // one line per finished job, and the state of the run every statusEvery
	every    time.Duration

	mu           sync.Mutex
	running      map[*job]time.Time
	done         int
	total        int
	phaseSeconds map[string]float64 // how long each phase took
}

// statusEvery is how often a long self-test says where it is.
const statusEvery = 15 * time.Second

// run runs every job of the plan; the first error (a cell that could not be set up, or ctx
// ended) stops it: the running jobs end, no other starts.
func (s *scheduler) run(ctx context.Context, plan []*job) error {
	s.running, s.total, s.phaseSeconds = map[*job]time.Time{}, len(plan), map[string]float64{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopStatus := s.status(ctx)
	defer stopStatus()
	var serial, parallel []*job
	for i, j := range plan {
		if s.logDir != "" {
			j.log = filepath.Join(s.logDir, fmt.Sprintf("%03d-%s.log", i+1, slug(j.name)))
		}
		if j.phase == PhaseSerial {
			serial = append(serial, j)
		} else {
			parallel = append(parallel, j)
		}
	}
	if len(serial) > 0 {
		fmt.Fprintf(s.progress, "  serial phase: %d jobs, one at a time\n", len(serial))
	}
	if err := s.phase(ctx, cancel, serial, 1, 1); err != nil {
		return err
	}
	if len(parallel) > 0 {
		fmt.Fprintf(s.progress, "  parallel phase: %d jobs, up to %d at once (%d on PostgreSQL)\n", len(parallel), s.parallel, s.pgSlots)
	}
	return s.phase(ctx, cancel, parallel, s.parallel, s.pgSlots)
}

// phase runs jobs up to n at once, at most pg of them on PostgreSQL, each job started as soon as
// a slot it may take is free: the next job on PostgreSQL when one of its slots is free, else the
// next job that is not on it.
func (s *scheduler) phase(ctx context.Context, cancel context.CancelFunc, jobs []*job, n, pg int) error {
	if len(jobs) == 0 {
		return nil
	}
	started := time.Now()
	defer func() {
		s.mu.Lock()
		s.phaseSeconds[jobs[0].phase] = time.Since(started).Seconds()
		s.mu.Unlock()
	}()
	n, pg = max(n, 1), max(pg, 1)
	pending := slices.Clone(jobs)
	type result struct {
		j   *job
		err error
	}
	doneCh := make(chan result)
	running, pgRunning := 0, 0
	var first error
	for len(pending) > 0 || running > 0 {
		for first == nil && ctx.Err() == nil && running < n {
			i := nextJob(pending, pgRunning < pg)
			if i < 0 {
				break
			}
			j := pending[i]
			pending = slices.Delete(pending, i, i+1)
			running++
			if j.pg {
				pgRunning++
			}
			go func() { doneCh <- result{j, s.runJob(ctx, j)} }()
		}
		if running == 0 {
			break // stopped: nothing runs, nothing more starts
		}
		r := <-doneCh
		running--
		if r.j.pg {
			pgRunning--
		}
		if r.err != nil && first == nil {
			first = fmt.Errorf("%s: %w", r.j.name, r.err)
			cancel()
		}
	}
	if first != nil {
		return first
	}
	return ctx.Err()
}

// nextJob returns the index of the pending job to start next, or -1 when none may start: the
// first on PostgreSQL when one of its slots is free (pgFree), else the first not on it.
// PostgreSQL's slots are the scarce ones: its jobs start first, so that the slots are busy from
// the phase's start, not left with a queue of their own at its end.
func nextJob(pending []*job, pgFree bool) int {
	if i := slices.IndexFunc(pending, func(j *job) bool { return j.pg }); i >= 0 && pgFree {
		return i
	}
	return slices.IndexFunc(pending, func(j *job) bool { return !j.pg })
}

// runJob runs one job with its log, timed, and prints its line.
func (s *scheduler) runJob(ctx context.Context, j *job) error {
	started := time.Now()
	s.mu.Lock()
	s.running[j] = started
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, j)
		s.done++
		s.mu.Unlock()
	}()
	log := io.Discard
	if j.log != "" {
		f, err := os.Create(j.log)
		if err != nil {
			return err
		}
		defer f.Close()
		log = &lockedWriter{w: f}
		fmt.Fprintf(log, "%s (%s phase), started %s\n\n", j.name, j.phase, started.Format(time.RFC3339))
	}
	correct, cell, err := j.run(context.WithValue(ctx, jobLogKey{}, log))
	j.seconds = time.Since(started).Seconds()
	if err != nil {
		fmt.Fprintf(log, "\nerror: %v\n", err)
		return err
	}
	for i := range correct {
		correct[i].Phase = j.phase
		printProgress(s.progress, correctLabel(correct[i]), correct[i].Store, correct[i].Property, correct[i].Result, correct[i].Seconds, correct[i].Reason)
	}
	if cell != nil {
		cell.Seconds, cell.Phase, cell.Log = j.seconds, j.phase, j.log
		printCell(s.progress, *cell)
	}
	j.correct, j.cell = correct, cell
	fmt.Fprintf(log, "\nended after %.1fs\n", j.seconds)
	return nil
}

// status prints, every s.every, how many jobs are done, running and left, and the one that
// has run longest; the function it returns stops it.
func (s *scheduler) status(ctx context.Context) func() {
	every := s.every
	if every <= 0 {
		every = statusEvery
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintln(s.progress, s.line())
			}
		}
	})
	return func() { close(stop); wg.Wait() }
}

// line is the state of the run: done / running / left, and the longest-running job.
func (s *scheduler) line() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var longest *job
	var since time.Time
	for j, t := range s.running {
		if longest == nil || t.Before(since) {
			longest, since = j, t
		}
	}
	left := s.total - s.done - len(s.running)
	out := fmt.Sprintf("  [%d done, %d running, %d left]", s.done, len(s.running), left)
	if longest != nil {
		out += fmt.Sprintf(" longest running: %s (%s)", longest.name, time.Since(since).Round(time.Second))
	}
	return out
}

// lockedWriter serialises the writes of the goroutines of one job (the harness, its processes).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// slug makes a job's name a file name.
func slug(name string) string {
	return strings.Trim(unsafeChars.ReplaceAllString(name, "_"), "_")
}
