package reports

import (
	"fmt"
	"io"
	"sync"
)

// ProgressPrinter prints one line per finished property while a run goes
// on, such as "[3/7] race ... pass (2.1s)". It is safe for concurrent use,
// and a nil *ProgressPrinter prints nothing.
type ProgressPrinter struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	done  int
}

// Progress returns a ProgressPrinter writing to w.
func Progress(w io.Writer) *ProgressPrinter {
	return &ProgressPrinter{w: w}
}

// SetTotal sets how many properties the run will report; with no total the
// lines read "[3] race ...".
func (p *ProgressPrinter) SetTotal(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = n
}

// Done prints the line for a finished property: its verdict and time, and
// unless it passed, the reason (or the failing specs). Write errors are
// ignored.
func (p *ProgressPrinter) Done(prop *Property) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	count := fmt.Sprintf("[%d/%d]", p.done, p.total)
	if p.total <= 0 {
		count = fmt.Sprintf("[%d]", p.done)
	}
	line := fmt.Sprintf("%s %s ... %s", count, termCell(prop.Name), termVerdict(prop.Verdict))
	if prop.Verdict != Skipped {
		line += " (" + fmtDuration(prop.Duration) + ")"
	}
	if n := note(prop); n != "" {
		line += ": " + termCell(n)
	}
	fmt.Fprintln(p.w, line)
}
