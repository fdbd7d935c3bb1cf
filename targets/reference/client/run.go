package client

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Run performs cfg.Ops one after another, each until it succeeds or fails finally, and
// writes a line per finished operation to cfg.Out. A failed operation is a Result in the
// Summary, not an error. The error is ErrInterrupted (wrapped) when ctx is cancelled, or a
// problem that stops the run before or between attempts: a bad Config, or a state
// directory that cannot be read or written (the client sends nothing it could not store).
// Run is not safe for concurrent use with one StateDir, nor with one Rand.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	m, err := ParseMutant(string(cfg.Mutant))
	if err != nil {
		return Summary{}, fmt.Errorf("--mutant: %v", err)
	}
	cfg.Mutant = m
	if err := cfg.check(); err != nil {
		return Summary{}, err
	}
	cfg.Policy = cfg.Policy.withDefaults()
	r := &runner{
		cfg:   cfg,
		state: stateDir{dir: cfg.StateDir, omitKey: cfg.Mutant == MutantKeyInMemory},
		out:   orDiscard(cfg.Out),
		log:   orDiscard(cfg.Log),
	}
	recs, err := r.state.open(cfg.Ops)
	if err != nil {
		return Summary{}, err
	}
	r.send = newSender(cfg.ordersURL(), cfg.Policy.AttemptTimeout)
	r.send.header = cfg.Header
	r.send.rewindable = cfg.Mutant == MutantTransportResend
	defer r.send.close()
	var sum Summary
	for i, op := range cfg.Ops {
		res, err := r.perform(ctx, i+1, op, recs[i])
		if err != nil {
			return sum, err
		}
		sum.add(res)
		fmt.Fprintln(r.out, res.Line())
	}
	return sum, nil
}

// runner is one run of the client.
type runner struct {
	cfg      Config
	state    stateDir
	send     *sender
	out, log io.Writer
}

// perform takes one operation from its record (nil: not started) to its end.
func (r *runner) perform(ctx context.Context, index int, op Operation, rec *Record) (Result, error) {
	var err error
	resumed := rec != nil && rec.Status == StatusPending
	if rec == nil {
		if rec, err = r.create(index, op); err != nil {
			return Result{}, err
		}
	} else if rec.Status != StatusPending {
		return r.earlier(*rec), nil
	} else if err = r.resume(rec); err != nil {
		return Result{}, err
	}
	res := Result{Index: index, Ref: op.Ref, Key: rec.Key, Attempts: rec.Attempts}
	last := "the outcome of the last one is unknown (the client stopped during it)"
	var retryAfter time.Duration
	var answered time.Time // when the last attempt ended
	for {
		if limit := r.maxAttempts(); limit > 0 && rec.Attempts-rec.PendingAt >= limit {
			return r.giveUp(rec, res, last)
		}
		var due time.Time
		if rec.Attempts > 0 {
			if answered.IsZero() { // resumed after a restart: it waits its backoff from now
				answered = time.Now()
			}
			due = answered.Add(r.backoff(rec, retryAfter))
		}
		rec.Attempts++
		// Durable before anything is sent. A retry's save runs within its backoff, which is
		// timed from the answer: a slow disk does not delay the retry past its envelope.
		if err := r.state.save(*rec); err != nil {
			return res, err
		}
		if err := r.pauseUntil(ctx, rec, due); err != nil {
			return res, err
		}
		key, body, err := r.attemptKeyBody(*rec, op, resumed)
		if err != nil {
			return res, err
		}
		a := r.send.send(ctx, key, body)
		answered = time.Now()
		if a.status == 0 && ctx.Err() != nil { // an answer that made it in still counts
			return res, r.interrupted(ctx, rec)
		}
		res.Key, res.Attempts, res.Status = key, rec.Attempts, a.status
		rec.Answered = rec.Answered || a.status != 0 // stored by the next save
		v := r.judge(a)
		fmt.Fprintf(r.log, "%s attempt %d%s (key %s): %s in %s\n", op.Ref, rec.Attempts, r.ofLimit(), orDash(key),
			a.describe(r.cfg.Policy.AttemptTimeout), a.took.Round(time.Millisecond))
		switch v.kind {
		case succeeded:
			return r.finish(rec, res, "")
		case final:
			return r.finish(rec, res, fmt.Sprintf("%s after %s", a.describe(r.cfg.Policy.AttemptTimeout), attempts(rec.Attempts)))
		}
		last, retryAfter = a.describe(r.cfg.Policy.AttemptTimeout), v.retryAfter
	}
}

// create draws a new operation's key and created_at. The record is stored, pending, by
// the save before its first attempt.
func (r *runner) create(index int, op Operation) (*Record, error) {
	key, err := r.operationKey(op)
	if err != nil {
		return nil, err
	}
	body, err := op.body(time.Now())
	if err != nil {
		return nil, err
	}
	return &Record{Index: index, Ref: op.Ref, Params: op.Params, Key: key, Body: string(body), Status: StatusPending}, nil
}

// resume takes up a pending operation from its record.
func (r *runner) resume(rec *Record) error {
	if rec.Key == "" {
		if r.cfg.Mutant != MutantKeyInMemory {
			return fmt.Errorf("state file %s: pending operation with no key (written by the key-in-memory mutant?): use a fresh --state",
				recordName(rec.Index))
		}
		key, err := newKey() // the bug: the key was never stored
		if err != nil {
			return err
		}
		rec.Key = key
	}
	fmt.Fprintf(r.log, "%s: resuming after %s with key %s and the stored body\n", rec.Ref, attempts(rec.Attempts), rec.Key)
	return nil
}

// earlier is the result of an operation that finished in an earlier run.
func (r *runner) earlier(rec Record) Result {
	res := Result{Index: rec.Index, Ref: rec.Ref, Key: rec.Key, Attempts: rec.Attempts,
		OK: rec.Status == StatusDone, Reason: rec.Reason, Earlier: true}
	if r.cfg.Mutant == MutantNoKey {
		res.Key = ""
	}
	return res
}

// finish stores the operation's end: done when reason is "", failed otherwise.
func (r *runner) finish(rec *Record, res Result, reason string) (Result, error) {
	rec.Status, rec.Reason = StatusDone, reason
	if reason != "" {
		rec.Status = StatusFailed
	}
	res.OK, res.Reason, res.Attempts = reason == "", reason, rec.Attempts
	return res, r.state.save(*rec)
}

// giveUp ends an operation out of attempts, the last of which got last: failed when an attempt of it was ever answered,
// else pending (whether the API acted is unknown): kept in the state directory with its key and
// body, and resumed with a new budget of attempts by the next run.
func (r *runner) giveUp(rec *Record, res Result, last string) (Result, error) {
	if rec.Answered || r.cfg.Mutant == MutantPendingAsFailure {
		return r.finish(rec, res, fmt.Sprintf("gave up after %s: %s", attempts(rec.Attempts), last))
	}
	rec.PendingAt = rec.Attempts
	rec.Reason = fmt.Sprintf("none of %s answered (the last: %s): whether the API acted is unknown", attempts(rec.Attempts), last)
	res.Pending, res.Reason, res.Attempts = true, rec.Reason, rec.Attempts
	if r.cfg.Mutant == MutantForgetsPending {
		return res, r.state.remove(*rec)
	}
	return res, r.state.save(*rec)
}

// backoff draws and logs the wait before the retry that follows attempt rec.Attempts.
func (r *runner) backoff(rec *Record, retryAfter time.Duration) time.Duration {
	n := rec.Attempts // the retry's number: attempt n+1 is retry n
	d := r.delay(n, retryAfter)
	asked := ""
	if retryAfter > 0 {
		asked = fmt.Sprintf(", Retry-After %s", retryAfter)
	}
	fmt.Fprintf(r.log, "%s: retry %d in %s (backoff cap %s%s)\n", rec.Ref, n, d.Round(time.Microsecond), r.cfg.Policy.Cap(n), asked)
	return d
}

// pauseUntil waits until due (the zero time and the past do not wait) before attempt
// rec.Attempts, which the state already counts.
func (r *runner) pauseUntil(ctx context.Context, rec *Record, due time.Time) error {
	d := time.Until(due)
	if due.IsZero() || d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		sent := *rec
		sent.Attempts-- // the one it waited to send was not sent
		return r.interrupted(ctx, &sent)
	}
}

// interrupted is the error of a run stopped during operation rec.
func (r *runner) interrupted(ctx context.Context, rec *Record) error {
	return fmt.Errorf("operation %d (ref %s, key %s, %s so far): %w (%v)",
		rec.Index, rec.Ref, orDash(rec.Key), attempts(rec.Attempts), ErrInterrupted, context.Cause(ctx))
}

// ofLimit is "/5" for a bounded client, "" for an unbounded one.
func (r *runner) ofLimit() string {
	if n := r.maxAttempts(); n > 0 {
		return fmt.Sprintf("/%d", n)
	}
	return ""
}

// attempts is "1 attempt" or "N attempts".
func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orDiscard is w, or io.Discard when w is nil.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
