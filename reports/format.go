package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxAttemptChars bounds each attempt transcript in summary.md and in the
// terminal; report.json keeps it whole.
const maxAttemptChars = 4000

// finding is a spec with a fail or unknown verdict, numbered in the order
// the reports list them.
type finding struct {
	N        int
	Property *Property
	Spec     *Spec
}

// findings returns the run's specs with verdict v (Fail or Unknown).
func findings(r *Run, v Verdict) []finding {
	var out []finding
	for i := range r.Properties {
		p := &r.Properties[i]
		for j := range p.Specs {
			if normal(p.Specs[j].Verdict) == v {
				out = append(out, finding{len(out) + 1, p, &p.Specs[j]})
			}
		}
	}
	return out
}

// headline returns the run's verdict as a word (PASS, FAIL, UNKNOWN) and a
// sentence that says what it rests on.
func headline(r *Run) (mark, text string) {
	n, c := len(r.Properties), r.Counts()
	switch r.Verdict() {
	case Fail:
		return "FAIL", fmt.Sprintf("%d of %d properties violated", c[Fail], n)
	case Unknown:
		if !r.Complete {
			return "UNKNOWN", fmt.Sprintf("run incomplete (%s), no violation found", orDash(r.Incomplete))
		}
		return "UNKNOWN", fmt.Sprintf("%d of %d properties unknown, no violation found", c[Unknown], n)
	}
	if n == 0 {
		return "PASS", "no property selected"
	}
	return "PASS", fmt.Sprintf("every checked property holds (%d of %d checked)", c[Pass], n)
}

// countsText lists non-zero verdict counts worst first: "1 fail, 4 pass".
func countsText(c map[Verdict]int) string {
	var parts []string
	for _, v := range verdictOrder {
		if c[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[v], v))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// runFacts describes the run in a few key/value pairs, empty ones left out.
func runFacts(r *Run) [][2]string {
	facts := [][2]string{
		{"target", r.Target.Name},
		{"file", r.Target.File},
		{"instances", strings.Join(r.Target.Instances, ", ")},
		{"seed", fmt.Sprint(r.Seed)},
		{"key", r.Key},
		{"run", r.RunID},
		{"tool", r.Tool},
		{"deviations from the articles' rules", strings.Join(r.Target.Deviations, "; ")},
	}
	if !r.Started.IsZero() && !r.Finished.IsZero() {
		facts = append(facts, [2]string{"time", fmtDuration(r.Finished.Sub(r.Started))})
	}
	return slices.DeleteFunc(facts, func(f [2]string) bool { return f[1] == "" })
}

// fmtDuration shows d to a tenth of a second, or in milliseconds below one.
func fmtDuration(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n]) + fmt.Sprintf("... (%d more characters)", len(rs)-n)
}

// orDash returns s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
