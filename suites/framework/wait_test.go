package framework

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30 s"},
		{17*time.Second + 200*time.Millisecond, "18 s"},
		{1500 * time.Millisecond, "1.5 s"},
		{300 * time.Millisecond, "0.3 s"},
		{119 * time.Second, "119 s"},
		{1999 * time.Millisecond, "2 s"},
		{2 * time.Minute, "2 min"},
		{125 * time.Second, "2 min 5 s"},
		{24 * time.Hour, "1440 min"},
	} {
		if got := Seconds(tc.d); got != tc.want {
			t.Errorf("Seconds(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// progressLine is one plain line of a wait's progress.
var progressLine = regexp.MustCompile(`^waiting for the lock timeout \(30 s\) to expire: [0-9.]+ s left$`)

// awaitOutput polls buf until it holds n occurrences of sub (at most 10 s, for a loaded machine).
func awaitOutput(buf *syncBuffer, sub string, n int) {
	for deadline := time.Now().Add(10 * time.Second); strings.Count(buf.String(), sub) < n && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWaitProgressPlain: outside a terminal a long wait prints plain lines once it has lasted
// the quiet time, then at most every interval, and none after it ends.
func TestWaitProgressPlain(t *testing.T) {
	var buf syncBuffer
	p := &waitPrinter{w: &buf, quiet: 20 * time.Millisecond, every: 40 * time.Millisecond}
	start := time.Now()
	stop := p.start(context.Background(), "the lock timeout (30 s) to expire", start.Add(time.Minute))
	awaitOutput(&buf, "\n", 3)
	stop()
	elapsed := time.Since(start)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// One line at the quiet time, then at most one per interval.
	if most := 1 + int((elapsed-p.quiet)/p.every); len(lines) < 3 || len(lines) > most {
		t.Fatalf("%d progress lines in %v, want 3 to %d:\n%s", len(lines), elapsed, most, buf.String())
	}
	for _, l := range lines {
		if !progressLine.MatchString(l) {
			t.Errorf("progress line %q does not say what it waits for and the time left", l)
		}
	}
	if strings.ContainsAny(buf.String(), "\r\033") {
		t.Errorf("plain progress holds terminal controls: %q", buf.String())
	}
	after := buf.String()
	stop() // stop is idempotent, and nothing prints after it returned
	if buf.String() != after {
		t.Errorf("printed after stop: %q", strings.TrimPrefix(buf.String(), after))
	}
}

// TestWaitProgressTerminal: on a terminal the progress is one line drawn over itself and
// cleared when the wait ends.
func TestWaitProgressTerminal(t *testing.T) {
	var buf syncBuffer
	p := &waitPrinter{w: &buf, tty: true, quiet: 10 * time.Millisecond, every: 20 * time.Millisecond}
	stop := p.start(context.Background(), "the lock timeout (30 s) to expire", time.Now().Add(time.Minute))
	awaitOutput(&buf, "waiting for", 2)
	stop()
	out := buf.String()
	if strings.Contains(out, "\n") || !strings.HasPrefix(out, "\r\033[Kwaiting for the lock timeout (30 s) to expire: ") || !strings.HasSuffix(out, "\r\033[K") {
		t.Fatalf("terminal progress %q: want lines drawn over each other (\\r, erase line) and cleared at the end", out)
	}
	draws := strings.Split(strings.TrimSuffix(out, "\r\033[K"), "\r\033[K")[1:]
	if len(draws) < 2 {
		t.Fatalf("terminal progress %q: want at least two draws", out)
	}
	for _, l := range draws {
		if !progressLine.MatchString(l) {
			t.Errorf("progress line %q", l)
		}
	}
}

// TestWaitProgressQuiet: a wait shorter than the quiet time, and a wait ended early (a polling
// loop that saw what it waited for), print nothing; a nil printer (no log) neither.
func TestWaitProgressQuiet(t *testing.T) {
	var buf syncBuffer
	p := &waitPrinter{w: &buf, quiet: 50 * time.Millisecond, every: 50 * time.Millisecond}
	p.start(context.Background(), "a short wait", time.Now().Add(40*time.Millisecond))()
	stop := p.start(context.Background(), "a long wait that ends early", time.Now().Add(time.Hour))
	stop()
	var none *waitPrinter
	none.start(context.Background(), "nothing", time.Now().Add(time.Hour))()
	if buf.String() != "" {
		t.Errorf("printed %q", buf.String())
	}
	s := &S{Env: &Env{waits: p}, ctx: context.Background()}
	if !s.WaitUntil("a short wait", time.Now().Add(10*time.Millisecond)) || buf.String() != "" {
		t.Errorf("WaitUntil of a short wait: printed %q", buf.String())
	}
}

// syncBuffer is a strings.Builder safe for the printer's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
