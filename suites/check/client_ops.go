package check

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The client side's model of a scenario's history: the client's attempts grouped into its
// logical operations, built once per history (GroupClientOps) and read by every client checker,
// so that no checker groups attempts by a rule of its own.
//
// The grouping rule: an operation is named by its declared identity (never by its key), and
// within one identity, an attempt that carries a key none of the operation's attempts carried,
// sent after the client was answered a 2xx for it, is a new operation: the client was told the
// operation went through, so a new key is a new intent (a customer may buy the same item
// twice), named "#2", "#3" in evidence. A new key after a failure or an answer the client never
// got stays in the operation (key-changed-on-retry; key-lost-on-restart after a restart).

// ClientOp is one logical operation of a client in a scenario: its definition and its
// attempts, in the order they arrived.
type ClientOp struct {
	Def      *targets.ClientOperation
	Identity string
	// N numbers the operations with one identity in the order they began (1 for the first; 0,
	// in a hand-built history, counts as 1).
	N        int
	Attempts []history.Attempt
	// Stalls, when set, holds for each attempt after the first how long the harness saw its own
	// process stalled between the previous attempt's answer and this attempt (a loaded machine:
	// framework.StallWatch); a delay judged late is judged without it.
	Stalls []time.Duration
}

// Name names the operation in evidence: its identity, and "#N" after it from its identity's
// second operation on.
func (op ClientOp) Name() string {
	if op.N > 1 {
		return fmt.Sprintf("%s #%d", op.Identity, op.N)
	}
	return op.Identity
}

// stall is how long the harness saw itself stalled before attempt n of op (0 when not told).
func (op ClientOp) stall(n int) time.Duration {
	if n < len(op.Stalls) {
		return op.Stalls[n]
	}
	return 0
}

// NewOperation is the grouping rule: an attempt with key, of an identity whose latest operation
// carried keys and whose client was answered a 2xx for it before the attempt arrived
// (answered), begins a new operation when it carries a key and none of those. The scripted API
// applies it as attempts arrive, GroupClientOps to the history.
func NewOperation(keys []string, answered bool, key string) bool {
	return answered && key != "" && !slices.Contains(keys, key)
}

// keys are the keys the operation's attempts carried.
func (op ClientOp) keys() []string {
	var out []string
	for _, a := range op.Attempts {
		if !slices.Contains(out, a.Key) {
			out = append(out, a.Key)
		}
	}
	return out
}

// answeredBefore reports whether the client was answered a 2xx for the operation by t.
func (op ClientOp) answeredBefore(t time.Time) bool {
	return slices.ContainsFunc(op.Attempts, func(a history.Attempt) bool { return is2xx(a.Status) && !a.Answered.After(t) })
}

// GroupClientOps groups a scenario's attempts into client c's logical operations (the grouping
// rule above), in the order each began, each operation's attempts in the order they arrived;
// attempts for no declared operation (AnswerUnknownPath) belong to none. stalled, when not nil,
// says how long the harness saw its own process stalled between two instants (ClientOp.Stalls).
func GroupClientOps(c *targets.Client, attempts []history.Attempt, stalled func(from, to time.Time) time.Duration) []ClientOp {
	sorted := slices.Clone(attempts)
	slices.SortStableFunc(sorted, func(x, y history.Attempt) int { return x.Start.Compare(y.Start) })
	var ops []ClientOp
	latest := map[string]int{} // operation name + identity → index of its latest operation
	count := map[string]int{}  // operation name + identity → operations so far
	for _, a := range sorted {
		if a.Answer == AnswerUnknownPath {
			continue
		}
		id := a.Op + "\x00" + a.Identity
		i, ok := latest[id]
		if !ok || NewOperation(ops[i].keys(), ops[i].answeredBefore(a.Start), a.Key) {
			count[id]++
			i = len(ops)
			latest[id] = i
			ops = append(ops, ClientOp{Def: opNamed(c, a.Op), Identity: a.Identity, N: count[id]})
		}
		ops[i].Attempts = append(ops[i].Attempts, a)
	}
	if stalled != nil {
		for i := range ops {
			as := ops[i].Attempts
			ops[i].Stalls = make([]time.Duration, len(as))
			for n := 1; n < len(as); n++ {
				ops[i].Stalls[n] = stalled(as[n-1].Answered, as[n].Start)
			}
		}
	}
	return ops
}

// opNamed returns client c's operation with this name (its first when none has it; nil without
// a client).
func opNamed(c *targets.Client, name string) *targets.ClientOperation {
	if c == nil || len(c.Operations) == 0 {
		return nil
	}
	for _, op := range c.Operations {
		if op.Name == name {
			return op
		}
	}
	return c.Operations[0]
}

// pendingAtKill is the operation whose attempt the API held unanswered when the client's first
// start was killed (restart-reuses-key), and that attempt; nil when none was held.
func (r ClientRun) pendingAtKill() (*ClientOp, history.Attempt) {
	return r.firstAttempt(func(a history.Attempt) bool { return a.Life == 1 && a.Answer == AnswerHeld })
}

// firstAttempt is the first attempt of the run (in the order of its operations) that is, and its
// operation; nil when none is.
func (r ClientRun) firstAttempt(is func(history.Attempt) bool) (*ClientOp, history.Attempt) {
	for i := range r.Ops {
		for _, a := range r.Ops[i].Attempts {
			if is(a) {
				return &r.Ops[i], a
			}
		}
	}
	return nil, history.Attempt{}
}
