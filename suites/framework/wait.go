package framework

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// A run that waits says so: every wait of a spec that may last longer than a few seconds (a lock
// timeout, a retention, a redelivery, a settle or drain, the time an event may take) goes
// through S.Waiting or S.WaitUntil, which print what it waits for and the time left on the run's
// log once it has lasted waitQuiet, then at most every waitEvery: on a terminal as one line
// that updates itself, elsewhere (CI, a pipe, a self-test cell's log) as plain lines.
const (
	waitQuiet = 3 * time.Second
	waitEvery = 5 * time.Second
)

// waitPrinter prints the progress of a run's long waits. A nil *waitPrinter prints nothing.
type waitPrinter struct {
	w            io.Writer
	tty          bool // one updating line instead of plain lines
	quiet, every time.Duration

	mu    sync.Mutex
	drawn bool // on a terminal: a progress line is drawn and not cleared yet
}

// newWaitPrinter prints to w (nil or io.Discard: nowhere); as one updating line when w is a
// terminal outside CI.
func newWaitPrinter(w io.Writer) *waitPrinter {
	if w == nil || w == io.Discard {
		return nil
	}
	return &waitPrinter{w: w, tty: isTerminal(w), quiet: waitQuiet, every: waitEvery}
}

// isTerminal reports whether w is a terminal a person watches: not in CI ($CI set, as GitHub
// Actions and GitLab set it), nor a dumb terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("CI") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(f.Fd())
}

// start announces a wait for what, which ends at until at the latest (or when ctx ends, or
// stop is called), and returns stop. Nothing is printed for a wait shorter than p.quiet.
func (p *waitPrinter) start(ctx context.Context, what string, until time.Time) (stop func()) {
	if p == nil || time.Until(until) <= p.quiet {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		timer := time.NewTimer(p.quiet)
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			left := time.Until(until)
			if left <= 0 {
				return
			}
			p.show(fmt.Sprintf("waiting for %s: %s left", what, Seconds(left)))
			timer.Reset(p.every)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
			p.clear()
		})
	}
}

// show prints one progress line: over the last on a terminal, on its own line elsewhere.
func (p *waitPrinter) show(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// clear removes a terminal's progress line, so that what is printed next starts a clean line.
func (p *waitPrinter) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		io.WriteString(p.w, "\r\033[K")
		p.drawn = false
	}
}

// Seconds writes a wait's length for a person: "30 s", "1.5 s", "2 min 5 s"; whole seconds
// are rounded up, so that a wait never reads shorter than it is.
func Seconds(d time.Duration) string {
	switch {
	case d < 10*time.Second && math.Ceil(d.Seconds()*10) != 10*math.Ceil(d.Seconds()):
		return fmt.Sprintf("%.1f s", math.Ceil(d.Seconds()*10)/10)
	case d < 2*time.Minute:
		return fmt.Sprintf("%d s", int(math.Ceil(d.Seconds())))
	}
	s := int(math.Ceil(d.Seconds()))
	if s%60 == 0 {
		return fmt.Sprintf("%d min", s/60)
	}
	return fmt.Sprintf("%d min %d s", s/60, s%60)
}

// Waiting announces a wait of the spec for what ("the lock timeout (30 s) to expire"), which
// ends at until at the latest, and returns the function that ends it (call it when the wait
// ends early: a polling loop that saw what it waited for).
func (s *S) Waiting(what string, until time.Time) (stop func()) {
	return s.waits.start(s.ctx, what, until)
}

// WaitUntil waits until t, announcing what it waits for; false when the spec was cancelled
// first. Use it, not SleepUntil, for every wait that may last longer than a few seconds.
func (s *S) WaitUntil(what string, t time.Time) bool {
	defer s.Waiting(what, t)()
	return s.SleepUntil(t)
}
