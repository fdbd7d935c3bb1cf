package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
)

// Poll is one read of an asynchronous operation's status resource.
type Poll struct {
	// At is when the read was answered (or failed).
	At time.Time
	// Status is its HTTP status (0: no answer); State the state it named; Phase what that is.
	Status int
	State  string
	Phase  targets.Phase
	// Err says why the read gave no state.
	Err string
}

// Settlement is what the harness saw of one asynchronous operation a spec started (an
// operation's async block): the reference its 202 carried and every read of its status resource
// until it was done, failed, or its settle passed.
type Settlement struct {
	// Op, Tenant and Key name the operation.
	Op, Tenant, Key string
	// Reference is the reference its 202 carried; NoReference, when set, why there was none to
	// follow (the operation could not be settled).
	Reference, NoReference string
	// Seqs are the answers that named it.
	Seqs []int64
	// Accepted is when its first 202 ended; Settle how long it may take from then.
	Accepted time.Time
	Settle   time.Duration
	// Polls are the reads of its status resource, in order.
	Polls []Poll
	// Phase is where the last read left it: done, failed, or pending (not settled).
	Phase targets.Phase
}

// Settled reports whether the operation was done or failed when the settling ended.
func (s Settlement) Settled() bool {
	return s.NoReference == "" && (s.Phase == targets.PhaseDone || s.Phase == targets.PhaseFailed)
}

// Took is how long after its 202 the operation was seen settled (or last read).
func (s Settlement) Took() time.Duration {
	if len(s.Polls) == 0 {
		return 0
	}
	return s.Polls[len(s.Polls)-1].At.Sub(s.Accepted)
}

// Pending is how long after its 202 the operation was last seen pending (0: never: it was done
// at its first read).
func (s Settlement) Pending() time.Duration {
	for i := len(s.Polls) - 1; i >= 0; i-- {
		if p := s.Polls[i]; p.Err == "" && p.Phase == targets.PhasePending {
			return p.At.Sub(s.Accepted)
		}
	}
	return 0
}

// Settled judges the settling of a spec's asynchronous operations: an operation not done (or
// failed) within its settle, or whose 202 carried no reference to follow, is an
// operation-not-settled anomaly (its records are not judged). A pass says how many operations
// settled and how long after its 202 the slowest was still pending.
func Settled(ss []Settlement) Result {
	var r Result
	var pending time.Duration
	settled := 0
	for _, s := range ss {
		switch {
		case s.NoReference != "":
			r.Anomalies = append(r.Anomalies, reports.Anomaly{Kind: reports.KindOperationNotSettled, Op: s.Op, Tenant: s.Tenant, Key: s.Key,
				Seqs: s.Seqs, Message: "the 202 carries no operation reference to follow: " + s.NoReference})
		case !s.Settled():
			r.Anomalies = append(r.Anomalies, reports.Anomaly{Kind: reports.KindOperationNotSettled, Op: s.Op, Tenant: s.Tenant, Key: s.Key,
				Seqs: s.Seqs, Message: fmt.Sprintf("operation %s was not done %v after its 202 (async.settle %v): %s",
					s.Reference, s.Took().Round(time.Millisecond), s.Settle, PollStates(s, 4))})
		default:
			settled++
			pending = max(pending, s.Pending())
		}
	}
	switch {
	case settled > 0 && pending > 0:
		r.Observef("%d asynchronous operations settled, the slowest still pending %v after its 202", settled, pending.Round(time.Millisecond))
	case settled > 0:
		r.Observef("%d asynchronous operations settled, each done at its first read", settled)
	}
	return r
}

// PollStates lists the states the reads of an operation's status resource found, each with
// when after its 202 ("pending at +3ms, succeeded at +52ms"); past max reads, the first and last
// max/2 with how many were left out.
func PollStates(s Settlement, max int) string {
	if len(s.Polls) == 0 {
		return "its status resource was never read"
	}
	words := func(p Poll) string {
		at := "at +" + p.At.Sub(s.Accepted).Round(time.Millisecond).String()
		switch {
		case p.Err != "":
			return fmt.Sprintf("no state %s (%s)", at, p.Err)
		case p.Status != 0 && (p.Status < 200 || p.Status > 299):
			return fmt.Sprintf("%d %s", p.Status, at)
		}
		return p.State + " " + at
	}
	var parts []string
	polls := s.Polls
	cut := 0
	if max > 1 && len(polls) > max {
		cut = len(polls) - max
		polls = slices.Concat(polls[:max/2], polls[len(polls)-max/2:])
	}
	for i, p := range polls {
		if cut > 0 && i == max/2 {
			parts = append(parts, fmt.Sprintf("(%d more)", cut))
		}
		parts = append(parts, words(p))
	}
	return fmt.Sprintf("%d reads: %s", len(s.Polls), strings.Join(parts, ", "))
}
