package framework

import (
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/check"
)

// S is one running spec: the environment, the spec's context (cancelled when the driver
// interrupts it or its run ends) and what the spec leaves behind for a person to judge a failure
// by (the keys it used, counts, differing paths, notes) and for the report (figures,
// artefacts). Its methods are safe for concurrent use.
type S struct {
	*Env
	ctx context.Context

	mu        sync.Mutex
	keys      []string
	counts    map[string]int
	diffPaths []string
	notes     []string
	figures   map[string]string
	artefacts map[string][]byte
	clients   []reports.ClientTimeline

	// The asynchronous operations (settle.go): the book's place at the spec's start, and what
	// the settling found.
	asyncFrom   int
	settleMu    sync.Mutex
	settlements []check.Settlement
}

// Session returns a running spec that belongs to no spec, for tools built on the suites (the
// bench) that drive generators directly.
func (e *Env) Session(ctx context.Context) *S {
	return &S{Env: e, ctx: mergeDone(ctx, e.done), asyncFrom: e.async.len()}
}

// Ctx is the spec's context.
func (s *S) Ctx() context.Context { return s.ctx }

// AttemptCtx returns a context bounded by the attempt timeout times n.
func (s *S) AttemptCtx(n int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, time.Duration(n)*s.Settings.AttemptTimeout)
}

// SleepUntil waits until t; false when the spec was cancelled first.
func (s *S) SleepUntil(t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// Notef records a free-form note for the evidence.
func (s *S) Notef(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, msg)
}

// NoteKey records a key whose attempts the evidence shows.
func (s *S) NoteKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if k == key {
			return
		}
	}
	s.keys = append(s.keys, key)
}

// NoteCount records an observed count for the evidence.
func (s *S) NoteCount(name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	s.counts[name] = n
}

// Figure publishes key figures of the spec's property.
func (s *S) Figure(f map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.figures == nil {
		s.figures = map[string]string{}
	}
	maps.Copy(s.figures, f)
}

// Artefact hands a file to the run's result (e.g. the load plot).
func (s *S) Artefact(name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.artefacts == nil {
		s.artefacts = map[string][]byte{}
	}
	s.artefacts[name] = data
}

// ClientTimeline hands a client scenario's attempts to report.html (titled with the spec).
func (s *S) ClientTimeline(ops []reports.ClientLane) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients = append(s.clients, reports.ClientTimeline{Ops: ops})
}

// Outcome is one spec's run: the checker's result and what the spec left behind.
type Outcome struct {
	// Spec is the spec that ran.
	Spec *Spec
	// Result is its checker's judgement.
	Result check.Result
	// Started and Duration time the spec.
	Started  time.Time
	Duration time.Duration
	// Interrupted says the spec was cut short (its context ended): its verdict is unknown.
	Interrupted bool
	// Evidence supports a fail or unknown verdict; nil on a pass.
	Evidence *reports.Evidence
	// Figures are the key figures it published for its property.
	Figures map[string]string
	// Artefacts are files it handed over, by name.
	Artefacts map[string][]byte
	// Clients are the client scenarios it drew, titled with its text.
	Clients []reports.ClientTimeline
}

// Verdict is the outcome's verdict (an interrupted spec's result is unknown unless it failed).
func (o *Outcome) Verdict() reports.Verdict { return o.Result.Verdict() }

// Message is the outcome in sentences.
func (o *Outcome) Message() string { return o.Result.Message() }

// RunSpec runs one spec against the environment. The spec stops when ctx ends (a driver's
// interrupt or deadline) or the environment closes; a panic in its body (a harness bug, or an
// answer nothing expected) becomes an unknown verdict that says so, never a crash of the run.
func (e *Env) RunSpec(ctx context.Context, sp *Spec) *Outcome {
	out := &Outcome{Spec: sp, Started: time.Now()}
	if sp.Skip != "" {
		out.Result = check.Skipf("%s", sp.Skip)
		return out
	}
	ctx = mergeDone(ctx, e.done)
	s := &S{Env: e, ctx: ctx, asyncFrom: e.async.len()}
	res := s.run(sp)
	res.Merge(s.settledResult())
	out.Result = redactResult(e.History.Redactor(), res)
	e.worstFirst(&out.Result)
	out.Duration = time.Since(out.Started)
	out.Interrupted = ctx.Err() != nil
	if out.Interrupted && out.Result.Verdict() != reports.Fail {
		out.Result = check.Unknownf("interrupted: %v", context.Cause(ctx))
	}
	out.Figures, out.Artefacts = s.figures, s.artefacts
	for _, c := range s.clients {
		c.Title = sp.FullText()
		out.Clients = append(out.Clients, c)
	}
	if out.Verdict() == reports.Fail || out.Verdict() == reports.Unknown {
		out.Evidence = s.evidence(sp, out.Result)
	}
	return out
}

// run calls the spec's body, turning a panic into an unknown result.
func (s *S) run(sp *Spec) (res check.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = check.Unknownf("the harness failed in %q: %v\n%s", sp.FullText(), r, firstLines(string(debug.Stack()), 12))
		}
	}()
	return sp.body(s)
}

// mergeDone returns ctx, also cancelled when done ends.
func mergeDone(ctx context.Context, done context.Context) context.Context {
	merged, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(done, func() { cancel(context.Cause(done)) })
	context.AfterFunc(merged, func() { stop() })
	return merged
}

// Evidence bounds.
const (
	maxEvidenceAttempts = 12 // transcripts kept per failing spec
	maxEvidenceKeys     = 6  // keys whose attempts a failure's evidence shows
)

// evidence renders what the spec left behind: the transcripts of the keys its anomalies name
// (or of every key it used), counts, paths, notes and a command line that reruns just this spec
// with the same keys and seed.
func (s *S) evidence(sp *Spec, res check.Result) *reports.Evidence {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := res.Keys(maxEvidenceKeys)
	if len(keys) == 0 {
		keys = s.keys
	}
	ev := &reports.Evidence{
		Message:   redactNotes(s.History.Redactor(), s.notes),
		Attempts:  s.transcripts(keys),
		Counts:    s.counts,
		DiffPaths: s.diffPaths,
		Repro:     s.repro(sp),
	}
	if len(keys) > 0 {
		ev.Message = strings.TrimSpace(ev.Message + "\nkeys: " + strings.Join(keys, ", "))
	}
	return ev
}

// transcripts returns the formatted, redacted attempts of keys: the first and last few of each
// key, bounded in all.
func (s *S) transcripts(keys []string) []string {
	var out []string
	for _, k := range keys {
		as := s.History.ByKey(k)
		if len(as) > 4 {
			as = append(as[:2:2], as[len(as)-2:]...)
		}
		for _, a := range as {
			if len(out) == maxEvidenceAttempts {
				return out
			}
			out = append(out, strings.TrimRight(a.String(), "\n"))
		}
	}
	return out
}

// repro is the command line that reruns one spec with this run's seed and keys.
func (s *S) repro(sp *Spec) string {
	cmd := s.Settings.Repro
	if s.Settings.ReproWhole {
		return cmd
	}
	if cmd == "" {
		cmd = "retrysafe run"
	}
	return fmt.Sprintf("%s --focus %s --seed %d --key %s", cmd, shellQuote("^"+regexpQuote(sp.FullText())+"$"),
		s.Settings.Seed, shellQuote(s.Settings.KeyPrefix))
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
