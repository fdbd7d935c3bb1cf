package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
)

// Downstream is what the harness's downstream sink saw of one operation.
type Downstream struct {
	// Calls are the calls the target made for the operation (answered or held).
	Calls int
	// Keys are the distinct downstream keys among them.
	Keys []string
	// Effects are the effects the provider performed (the first 2xx per downstream key).
	Effects int
	// Taken is false when the target calls no sink: nothing is checked.
	Taken bool
}

// effects checks the downstream effects of an operation: more than want is a duplicate effect
// (the provider charged twice).
func (j *judge) effects(d Downstream, want int, c Count, seqs ...int64) {
	if !d.Taken || d.Effects <= want {
		return
	}
	j.add(countAnomaly(reports.KindDuplicateDownstreamEffect, c, fmt.Sprintf(
		"the downstream provider performed %d effects for %s (over %d calls with %d distinct downstream keys), want %d",
		d.Effects, c.subject(), d.Calls, len(d.Keys), want), seqs...))
}

// calls checks that an operation reached the provider at most want times: another call is a
// second execution.
func (j *judge) calls(d Downstream, want int, c Count, when string, seqs ...int64) {
	if !d.Taken || d.Calls <= want {
		return
	}
	j.add(countAnomaly(reports.KindDuplicateExecution, c, fmt.Sprintf(
		"%s reached the downstream provider %d times %s, want %d: it was executed again", c.subject(), d.Calls, when, want), seqs...))
}
