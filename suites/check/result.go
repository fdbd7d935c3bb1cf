// Package check holds retrysafe's checkers: one pure function per property that reads what a
// spec observed (attempts from the history, record counts from the observers, downstream
// effects from the sink, fault events) and returns a Result: a verdict, the anomalies found,
// each of a documented kind (reports.Kind), and the reasons a verdict stayed unknown.
//
// Checkers never send, wait or count: the properties of the side packages (suites/api,
// suites/consumer) drive the target and hand their observations over. An attempt whose outcome
// is unknown (a timeout, a lost response) is never held against the target: it makes the result
// unknown unless something else is a violation.
package check

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Result is a checker's judgement.
type Result struct {
	// Anomalies are the violations found, in the order found.
	Anomalies []reports.Anomaly
	// Unknown are the reasons the target's behaviour could not be established.
	Unknown []string
	// Skip says why the check did not apply (a precondition the target does not meet).
	Skip string
	// Observed says what a verdict that rests on chance rests on (e.g. how many deliveries of
	// a burst were in flight at once): a pass of such a spec says it too.
	Observed []string
}

// Observef records what the verdict rests on.
func (r *Result) Observef(format string, args ...any) {
	r.Observed = append(r.Observed, fmt.Sprintf(format, args...))
}

// Verdict is fail when there is an anomaly, else unknown when there is a reason for it, else
// skipped when the check did not apply, else pass.
func (r Result) Verdict() reports.Verdict {
	switch {
	case len(r.Anomalies) > 0:
		return reports.Fail
	case len(r.Unknown) > 0:
		return reports.Unknown
	case r.Skip != "":
		return reports.Skipped
	}
	return reports.Pass
}

// Unknownf returns a result whose verdict is unknown for the reason given.
func Unknownf(format string, args ...any) Result {
	return Result{Unknown: []string{fmt.Sprintf(format, args...)}}
}

// Skipf returns a result that says the check does not apply, and why.
func Skipf(format string, args ...any) Result {
	return Result{Skip: fmt.Sprintf(format, args...)}
}

// Merge appends o's anomalies and unknown reasons to r (and keeps r's skip reason, or takes o's).
func (r *Result) Merge(o Result) {
	r.Anomalies = append(r.Anomalies, o.Anomalies...)
	r.Unknown = append(r.Unknown, o.Unknown...)
	r.Observed = append(r.Observed, o.Observed...)
	if r.Skip == "" {
		r.Skip = o.Skip
	}
}

// MaxMessageAnomalies bounds the anomalies a Message lists.
const MaxMessageAnomalies = 20

// Message is the result in sentences: one line per anomaly (at most MaxMessageAnomalies, then how
// many more), or the reasons it is unknown, or why it was skipped.
func (r Result) Message() string {
	var lines []string
	switch {
	case len(r.Anomalies) > 0:
		for i, a := range r.Anomalies {
			if i == MaxMessageAnomalies {
				lines = append(lines, fmt.Sprintf("... and %d more", len(r.Anomalies)-i))
				break
			}
			lines = append(lines, a.String())
		}
	case len(r.Unknown) > 0:
		lines = r.Unknown
	default:
		lines = []string{r.Skip}
	}
	return strings.Join(lines, "\n")
}

// Keys returns the distinct keys of the anomalies, at most n, in order.
func (r Result) Keys(n int) []string {
	var keys []string
	seen := map[string]bool{}
	for _, a := range r.Anomalies {
		if a.Key != "" && !seen[a.Key] && len(keys) < n {
			seen[a.Key] = true
			keys = append(keys, a.Key)
		}
	}
	return keys
}

// Count is a count of business records (or effects) taken through an observer: N, or why it
// could not be taken.
type Count struct {
	// Op, Tenant, Ref and Key say whose records were counted.
	Op, Tenant, Ref, Key string
	// N is the count.
	N int
	// Err is the observer's error; the count is then unknown.
	Err string
	// Taken is false when nothing could count (no observer declared): the count is not checked.
	Taken bool

	// An asynchronous operation's (its async block), as the settling left it.

	// Unsettled says the operation was not done within its settle: the count is not checked
	// (the settling's operation-not-settled anomaly says why).
	Unsettled bool
	// Failed says the operation's status resource reported it failed: it was not acknowledged,
	// so only a duplicate is held against the target.
	Failed bool
}

// known reports whether the count was taken without an error: N holds it.
func (c Count) known() bool { return c.Taken && c.Err == "" }

// Counted returns a taken count.
func Counted(n int) Count { return Count{N: n, Taken: true} }

// anomaly returns an anomaly about an attempt's operation.
func anomaly(kind reports.Kind, a history.Attempt, msg string, seqs ...int64) reports.Anomaly {
	return reports.Anomaly{Kind: kind, Op: a.Op, Tenant: a.Tenant, Key: a.Key, Seqs: seqs, Message: msg}
}

// countAnomaly returns an anomaly about a count.
func countAnomaly(kind reports.Kind, c Count, msg string, seqs ...int64) reports.Anomaly {
	return reports.Anomaly{Kind: kind, Op: c.Op, Tenant: c.Tenant, Key: c.Key, Seqs: seqs, Message: msg}
}
