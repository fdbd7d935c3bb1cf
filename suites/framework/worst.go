package framework

import (
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/check"
)

// worstFirst orders a spec's anomalies worst first (reports.SortWorstFirst), so that its message
// and evidence lead with them, and notes on each the statuses of its first and last attempt,
// which tell the anomalies of one cause apart (reports.FindCauses).
func (e *Env) worstFirst(r *check.Result) {
	reports.SortWorstFirst(r.Anomalies)
	for i := range r.Anomalies {
		a := &r.Anomalies[i]
		if len(a.Seqs) == 0 || a.Statuses != nil {
			continue
		}
		first, ok1 := e.statusOf(a.Seqs[0])
		last, ok2 := e.statusOf(a.Seqs[len(a.Seqs)-1])
		if ok1 && ok2 {
			a.Statuses = []int{first, last}
		}
	}
}

// statusOf is the status of the history's entry seq (0: it got no answer), and whether there is
// such an attempt.
func (e *Env) statusOf(seq int64) (int, bool) {
	for a := range e.History.After(seq - 1) {
		return a.Status, a.Seq == seq && !a.IsEvent()
	}
	return 0, false
}
