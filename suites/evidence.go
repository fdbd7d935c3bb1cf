package suites

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/reports"

	"github.com/retrysafe/retrysafe/suites/history"
)

// Evidence is what a spec leaves behind for a person to judge a failure by: the keys it
// used (whose attempts the history holds), the record counts it observed, the JSON paths
// that differed, and notes.
type Evidence struct {
	Keys      []string
	Counts    map[string]int
	DiffPaths []string
	Notes     []string
}

// maxEvidenceAttempts bounds the transcripts kept per failing spec.
const maxEvidenceAttempts = 12

// beginEvidence starts the evidence of a new spec.
func (e *Env) beginEvidence() *Evidence {
	e.evMu.Lock()
	defer e.evMu.Unlock()
	e.current = &Evidence{}
	return e.current
}

// note records an operation's key in the current spec's evidence.
func (e *Env) note(o *Op) {
	e.evMu.Lock()
	defer e.evMu.Unlock()
	if e.current == nil {
		return
	}
	for _, k := range e.current.Keys {
		if k == o.Key {
			return
		}
	}
	e.current.Keys = append(e.current.Keys, o.Key)
}

// noteCount records an observed record count.
func (e *Env) noteCount(o *Op, n int, err error) {
	tenant := "-"
	if o.Tenant != nil {
		tenant = o.Tenant.Name
	}
	name := fmt.Sprintf("records(%s, tenant %s, ref %s)", o.Def.Name, tenant, o.Ref)
	e.evidenceNote(func(ev *Evidence) {
		if err != nil {
			ev.Notes = append(ev.Notes, name+": "+err.Error())
			return
		}
		if ev.Counts == nil {
			ev.Counts = map[string]int{}
		}
		ev.Counts[name] = n
	})
}

// noteDiff records differing paths between two answers.
func (e *Env) noteDiff(paths []string) {
	e.evidenceNote(func(ev *Evidence) { ev.DiffPaths = append(ev.DiffPaths, paths...) })
}

// notef records a free-form note.
func (e *Env) notef(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	e.evidenceNote(func(ev *Evidence) { ev.Notes = append(ev.Notes, msg) })
}

func (e *Env) evidenceNote(f func(*Evidence)) {
	e.evMu.Lock()
	defer e.evMu.Unlock()
	if e.current != nil {
		f(e.current)
	}
}

// attempts returns the formatted, redacted transcripts of the evidence's keys: the first
// and last few of each key, bounded in all.
func (ev *Evidence) attempts(h *history.History) []string {
	var out []string
	for _, k := range ev.Keys {
		as := h.ByKey(k)
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

// evidenceSnapshot renders the running spec's evidence for the report, with a command line
// that reruns just this spec with the same keys and seed.
func (e *Env) evidenceSnapshot() reports.Evidence {
	e.evMu.Lock()
	ev := e.current
	e.evMu.Unlock()
	if ev == nil {
		ev = &Evidence{}
	}
	out := reports.Evidence{
		Message:   strings.Join(ev.Notes, "\n"),
		Attempts:  ev.attempts(e.History),
		Counts:    ev.Counts,
		DiffPaths: ev.DiffPaths,
		Repro:     e.repro(CurrentSpecReport().FullText()),
	}
	if len(ev.Keys) > 0 {
		out.Message = strings.TrimSpace(out.Message + "\nkeys: " + strings.Join(ev.Keys, ", "))
	}
	return out
}

// repro is the command line that reruns one spec with this run's seed and keys.
func (e *Env) repro(specText string) string {
	cmd := e.Settings.Repro
	if cmd == "" {
		cmd = "retrysafe run"
	}
	return fmt.Sprintf("%s --focus %s --seed %d --key %s", cmd, shellQuote("^"+regexpQuote(specText)+"$"),
		e.Settings.Seed, shellQuote(e.Settings.KeyPrefix))
}

// keepKeys narrows the running spec's evidence to these keys (the ones that failed).
func (e *Env) keepKeys(keys []string) {
	e.evidenceNote(func(ev *Evidence) { ev.Keys = append([]string(nil), keys...) })
}
