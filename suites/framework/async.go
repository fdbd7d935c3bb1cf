package framework

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// This file follows the asynchronous operations (an operation's async block): the history's
// annotator reads the operation reference of every answer as it is recorded (whatever sent it:
// an Op, a burst, the load) and books every 202 to follow; S.Settle (settle.go) polls what a spec
// booked. Under profile.replay_returns: current the annotator also reads the resource an answer
// names, right after it.

// asyncBook is what the annotator booked: the operations to follow, in the order first seen.
type asyncBook struct {
	e *Env

	mu    sync.Mutex
	ops   []*followed
	index map[followKey]*followed

	// noReads turns the fresh reads off (a load's attack).
	noReads atomic.Bool
}

// followKey names one operation to follow: the answers with this reference to one key.
type followKey struct{ op, tenant, key, ref string }

// followed is one asynchronous operation a spec started, and what its settling found.
type followed struct {
	n        int // its place in asyncBook.ops
	def      *targets.Operation
	tenant   string // as the attempt names it: the tenant's name ("" = none)
	key      string
	ref      string
	noRef    string    // why its 202 carried no reference ("" = it did)
	instance string    // the host:port its first 202 came from
	accepted time.Time // when its first 202 ended

	// Owned by the settling (one goroutine at a time: S.settleMu); done under asyncBook.mu.
	polls []check.Poll
	phase targets.Phase
	done  bool // settled, or given up (or no reference): never polled again
	taken bool // a settling took it (it is judged once)
}

// newAsyncBook returns the book of a target whose operations declare an async block, or whose
// replays are compared with fresh reads; nil for others.
func newAsyncBook(e *Env) *asyncBook {
	for _, op := range e.Target.Operations {
		if op.Async != nil || (op.Resource != nil && e.Target.Profile.ReplayReturns == targets.ReplayCurrent) {
			return &asyncBook{e: e, index: map[followKey]*followed{}}
		}
	}
	return nil
}

// len is how many operations were booked so far (a spec follows those booked after its start).
func (b *asyncBook) len() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.ops)
}

// annotate is the history's annotator: an answer's operation reference, the booking of a 202 to
// follow, the fresh read of the resource an answer names.
func (b *asyncBook) annotate(a *history.Attempt) {
	def := b.operation(a.Op)
	if def == nil || a.Outcome != history.OK {
		return
	}
	p := b.e.Target.Profile
	if def.Async != nil && a.Status >= 200 && a.Status < 400 {
		ref, err := def.Async.Reference(a.RespHeader, a.RespBody, targets.Vars{Key: a.Key, Tenant: a.Tenant})
		a.Reference = ref
		if a.Status == http.StatusAccepted || p.InFlightAnswer(a.Status) {
			b.book(def, a, ref, err)
		}
	}
	if def.Resource != nil && p.ReplayReturns == targets.ReplayCurrent && p.Success(a.Status) && !b.noReads.Load() {
		if id, ok := def.Resource.IDOf(a.RespBody); ok {
			a.Current = b.read(def, a, id)
		}
	}
}

// operation returns the declared operation of that name (nil: none, or none to annotate).
func (b *asyncBook) operation(name string) *targets.Operation {
	for _, op := range b.e.Target.Operations {
		if op.Name == name {
			return op
		}
	}
	return nil
}

// book adds the operation a 202 names, unless it was booked already.
func (b *asyncBook) book(def *targets.Operation, a *history.Attempt, ref string, err error) {
	k := followKey{def.Name, a.Tenant, a.Key, ref}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.index[k]; seen {
		return
	}
	f := &followed{n: len(b.ops), def: def, tenant: a.Tenant, key: a.Key, ref: ref, instance: a.Instance, accepted: a.End,
		phase: targets.PhasePending}
	if ref == "" {
		f.noRef = noReferenceWhy(def.Async, err)
		f.done = true
	}
	b.ops = append(b.ops, f)
	b.index[k] = f
}

// noReferenceWhy says why a 202 carried no reference.
func noReferenceWhy(a *targets.Async, err error) string {
	where := "header " + a.Header
	if a.Header == "" {
		where = "jsonpath " + a.JSONPath
	}
	if err != nil {
		return fmt.Sprintf("async.reference (%s): %v", where, err)
	}
	return fmt.Sprintf("async.reference (%s) finds nothing in the answer", where)
}

// read makes the fresh read of the resource id on the instance the answer came from.
func (b *asyncBook) read(def *targets.Operation, a *history.Attempt, id string) *history.Read {
	e := b.e
	path, err := def.Resource.PathOf(targets.Vars{Key: a.Key, Tenant: a.Tenant}, id)
	r := &history.Read{URL: path}
	if err == nil {
		r.URL, err = targets.StatusURL(e.Target.InstanceAt(a.Instance), path)
	}
	if err != nil {
		r.Err, r.At = err.Error(), time.Now()
		return r
	}
	ctx, cancel := context.WithTimeout(e.done, e.Settings.AttemptTimeout)
	defer cancel()
	status, body, err := targets.Read(ctx, e.Observer, r.URL, e.Target.TenantNamed(a.Tenant))
	r.At, r.Status, r.Body = time.Now(), status, body
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// pending reports whether an operation booked from place from on is still to settle.
func (b *asyncBook) pending(from int) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.ops[min(from, len(b.ops)):] {
		if !f.taken {
			return true
		}
	}
	return false
}

// take returns the operations booked from place from on that no settling took yet, and marks
// them taken.
func (b *asyncBook) take(from int) []*followed {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*followed
	for _, f := range b.ops[min(from, len(b.ops)):] {
		if !f.taken {
			f.taken = true
			out = append(out, f)
		}
	}
	return out
}

// of returns the operations booked from place from on for one key of one operation and tenant.
func (b *asyncBook) of(from int, op, tenant, key string) []*followed {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*followed
	for _, f := range b.ops[min(from, len(b.ops)):] {
		if f.def.Name == op && f.tenant == tenant && f.key == key {
			out = append(out, f)
		}
	}
	return out
}

// finish marks an operation followed: never polled again.
func (b *asyncBook) finish(f *followed) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f.done = true
}

// finished reports whether an operation was followed.
func (b *asyncBook) finished(f *followed) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return f.done
}
