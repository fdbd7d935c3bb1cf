package framework

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// Settling: before a spec counts records, every asynchronous operation it started (each 202 the
// annotator booked, async.go) is followed until its status resource says it is done or failed,
// or its settle has passed. The polls go out in batches, a few at a time, never a goroutine per
// operation: a load's hundreds of operations are read by settleWorkers. A spec's settlements are
// judged once when it ends (check.Settled: operation-not-settled), and its counts say which
// operations were not settled (their records are not judged) or failed (not acknowledged).

// settleWorkers bounds the status resources read at once.
const settleWorkers = 8

// maxSettleNotes bounds the settlements a spec's evidence describes one by one.
const maxSettleNotes = 8

// Settle follows every asynchronous operation the spec started and has not followed yet, until
// each is done or failed or its settle has passed. Every property calls it (through Op.Count,
// Op.CountQuiet and the load's counting) before it counts, so that a property never knows
// whether the API is asynchronous; for a synchronous API it does nothing.
func (s *S) Settle() {
	if !s.async.pending(s.asyncFrom) {
		return
	}
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	fs := s.async.take(s.asyncFrom) // another goroutine of the spec may have taken some meanwhile
	s.follow(fs)
	named := 0
	for _, f := range fs {
		st := f.settlement()
		if !st.Settled() && named < maxSettleNotes { // the anomaly names the answers it rests on
			st.Seqs, named = s.answersOf(f), named+1
		}
		s.settlements = append(s.settlements, st)
		if len(s.settlements) <= maxSettleNotes {
			s.Notef("%s", settleNote(st))
		}
	}
}

// follow polls the operations' status resources until each is settled or past its settle: a
// batch of the due reads at a time, then a wait until the next is due.
func (s *S) follow(fs []*followed) {
	next := make([]time.Time, len(fs)) // zero: due now
	for s.ctx.Err() == nil {
		now := time.Now()
		var due []int
		for i, f := range fs {
			if !s.async.finished(f) && !next[i].After(now) {
				due = append(due, i)
			}
		}
		batch := make([]*followed, len(due))
		for j, i := range due {
			batch[j] = fs[i]
		}
		s.pollBatch(batch)
		for _, i := range due {
			f := fs[i]
			deadline := f.accepted.Add(f.def.Async.Settle)
			last := f.polls[len(f.polls)-1].At
			if f.phase != targets.PhasePending || !last.Before(deadline) {
				s.async.finish(f)
				continue
			}
			next[i] = last.Add(f.def.Async.Poll)
			if next[i].After(deadline) { // the last read is at the deadline
				next[i] = deadline
			}
		}
		var wake time.Time
		for i, f := range fs {
			if !s.async.finished(f) && (wake.IsZero() || next[i].Before(wake)) {
				wake = next[i]
			}
		}
		if wake.IsZero() || !s.SleepUntil(wake) {
			break
		}
	}
	for _, f := range fs {
		s.async.finish(f) // interrupted or given up: what it found stays
	}
}

// pollBatch reads the status resource of each operation once, settleWorkers at a time.
func (s *S) pollBatch(fs []*followed) {
	jobs := make(chan *followed)
	var wg sync.WaitGroup
	for range min(settleWorkers, len(fs)) {
		wg.Go(func() {
			for f := range jobs {
				p := s.poll(f)
				f.polls = append(f.polls, p)
				if p.Err == "" {
					f.phase = p.Phase
				}
			}
		})
	}
	for _, f := range fs {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
}

// poll reads one operation's status resource.
func (s *S) poll(f *followed) check.Poll {
	url, err := targets.StatusURL(s.Target.InstanceAt(f.instance), f.ref)
	if err != nil {
		return check.Poll{At: time.Now(), Phase: targets.PhasePending, Err: err.Error()}
	}
	ctx, cancel := s.AttemptCtx(1)
	defer cancel()
	status, body, err := targets.Read(ctx, s.Observer, url, s.Target.TenantNamed(f.tenant))
	p := check.Poll{At: time.Now(), Status: status, Phase: targets.PhasePending}
	switch {
	case err != nil:
		p.Err = err.Error()
	case status < 200 || status > 299:
		p.Err = fmt.Sprintf("GET %s answered %d", f.ref, status)
	default:
		if p.State, p.Phase, err = f.def.Async.PhaseOf(body); err != nil {
			p.Err = err.Error()
		}
	}
	return p
}

// answersOf returns the attempts whose answer booked the operation (at most a few): its 202s
// (or in-flight answers) naming its reference (a compact record keeps none: any of its key's).
func (s *S) answersOf(f *followed) []int64 {
	var seqs []int64
	p := s.Target.Profile
	for _, a := range s.History.ByKey(s.History.Redactor().String(f.key)) {
		booked := a.Status == http.StatusAccepted || p.InFlightAnswer(a.Status)
		if a.Op == f.def.Name && booked && (a.Reference == f.ref || a.Compacted) && len(seqs) < 4 {
			seqs = append(seqs, a.Seq)
		}
	}
	return seqs
}

// settlement is what the settling found of an operation.
func (f *followed) settlement() check.Settlement {
	return check.Settlement{Op: f.def.Name, Tenant: f.tenant, Key: f.key, Reference: f.ref, NoReference: f.noRef,
		Accepted: f.accepted, Settle: f.def.Async.Settle, Polls: f.polls, Phase: f.phase}
}

// settleNote describes a settlement for the evidence: the reference, each read's state and when
// it settled.
func settleNote(st check.Settlement) string {
	who := fmt.Sprintf("operation %s key %s", st.Op, st.Key)
	if st.Tenant != "" {
		who += " tenant " + st.Tenant
	}
	switch {
	case st.NoReference != "":
		return who + ": its 202 carried no reference: " + st.NoReference
	case st.Settled():
		return fmt.Sprintf("%s: reference %s: %s: %s at the read %v after its 202", who, st.Reference, check.PollStates(st, 12),
			st.Phase, st.Took().Round(time.Millisecond))
	}
	return fmt.Sprintf("%s: reference %s: %s: not settled within %v", who, st.Reference, check.PollStates(st, 12), st.Settle)
}

// settledResult is the judgement of the spec's settlements (none: an empty result), with a note
// of how many the evidence left out.
func (s *S) settledResult() check.Result {
	s.settleMu.Lock()
	defer s.settleMu.Unlock()
	if n := len(s.settlements) - maxSettleNotes; n > 0 {
		s.Notef("... and %d more asynchronous operations settled", n)
	}
	return check.Settled(s.settlements)
}

// settledCount marks a count of a key's records with what the settling found of the key's
// operations: unsettled (not judged) or failed (not acknowledged).
func (s *S) settledCount(c check.Count, op *targets.Operation, tenant, key string) check.Count {
	for _, f := range s.async.of(s.asyncFrom, op.Name, tenant, key) {
		st := f.settlement()
		switch {
		case !st.Settled():
			c.Unsettled = true
		case st.Phase == targets.PhaseFailed:
			c.Failed = true
		}
	}
	return c
}

// SettleSkip says why the API side's specs cannot run within --max-wait: an operation's
// async.settle is longer ("" = none is).
func (e *Env) SettleSkip() string {
	var long []string
	for _, op := range e.Target.Operations {
		if a := op.Async; a != nil && a.Settle > e.Settings.MaxWait {
			long = append(long, fmt.Sprintf("operation %s's async.settle %v", op.Name, a.Settle))
		}
	}
	if len(long) == 0 {
		return ""
	}
	verb := "is"
	if len(long) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("%s %s longer than --max-wait %v: the records could not be counted once the operations are done",
		strings.Join(long, " and "), verb, e.Settings.MaxWait)
}

// longestSettle is the longest async.settle of an operation (0: it is synchronous).
func longestSettle(op *targets.Operation) time.Duration {
	if op.Async == nil {
		return 0
	}
	return op.Async.Settle
}
