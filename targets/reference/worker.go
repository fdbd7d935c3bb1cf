package reference

import (
	"context"
	"slices"
	"sync"
	"time"
)

// The worker of an asynchronous API (Config.Async): it runs the pending jobs, oldest first, a
// few at a time, each Config.AsyncDelay after it was written at the earliest: the downstream
// call (the operation's derived key), then the record and the job's state in one transaction
// (Jobs.FinishJob). It takes the jobs its own requests hand it at once, and reads the pending
// ones from the store every workerScan, so that a job accepted before a crash is run after the
// restart (the async-lost-on-crash mutant reads none: a job lives in its process's memory).

// Worker bounds.
const (
	workerScan     = 50 * time.Millisecond // how often the store's pending jobs are read
	workerParallel = 8                     // jobs run at once
	workerBatch    = 64                    // pending jobs read at a time
)

// worker runs an asynchronous API's jobs.
type worker struct {
	a         *API
	jobs      Jobs
	fromStore bool
	wake      chan struct{}

	mu      sync.Mutex
	queue   []Job           // handed over by this process's requests, not yet taken
	running map[string]bool // job ids being run
}

func newWorker(a *API, jobs Jobs) *worker {
	return &worker{a: a, jobs: jobs, fromStore: a.cfg.Mutant != MutantAsyncLostOnCrash, wake: make(chan struct{}, 1),
		running: map[string]bool{}}
}

// WorkerLoop runs the asynchronous API's jobs until ctx ends; it returns at once for an API that
// is not asynchronous.
func (a *API) WorkerLoop(ctx context.Context) {
	if a.worker != nil {
		a.worker.run(ctx)
	}
}

// enqueue hands the worker a job its process accepted.
func (w *worker) enqueue(j Job) {
	w.mu.Lock()
	w.queue = append(w.queue, j)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run starts the due jobs until ctx ends, and waits for those running.
func (w *worker) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	scan := time.NewTicker(workerScan)
	defer scan.Stop()
	read := w.fromStore // read the store's pending jobs: at the start, then on each tick
	for ctx.Err() == nil {
		due, next := w.due(ctx, read)
		read = false
		for _, j := range due {
			wg.Go(func() { w.do(ctx, j) })
		}
		var timer <-chan time.Time
		if next > 0 {
			timer = time.After(next)
		}
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-scan.C:
			read = w.fromStore
		case <-timer:
		}
	}
}

// due marks running and returns the jobs to start now (at most the free places), from the
// queue and, when read is set, the store's pending jobs, and how long until the next one waiting
// for its delay is due (0: none waits). The jobs it cannot start yet stay queued.
func (w *worker) due(ctx context.Context, read bool) ([]Job, time.Duration) {
	var stored []Job
	if read {
		var err error
		if stored, err = w.jobs.PendingJobs(ctx, workerBatch); err != nil && ctx.Err() == nil {
			w.a.cfg.Logger.Printf("worker: pending jobs: %v", err)
		}
	}
	now := w.a.cfg.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	candidates := append(slices.Clone(w.queue), stored...)
	slices.SortStableFunc(candidates, func(x, y Job) int { return x.Created.Compare(y.Created) })
	var out, kept []Job
	var next time.Duration
	seen := make(map[string]bool, len(candidates))
	for _, j := range candidates {
		if w.running[j.ID] || seen[j.ID] {
			continue
		}
		seen[j.ID] = true
		wait := j.Created.Add(w.a.cfg.AsyncDelay).Sub(now)
		switch {
		case wait > 0 || len(w.running) >= workerParallel:
			if wait > 0 && (next == 0 || wait < next) {
				next = wait
			}
			kept = append(kept, j)
		default:
			w.running[j.ID] = true
			out = append(out, j)
		}
	}
	w.queue = kept
	return out, next
}

// do runs one job: the downstream call, then the record and the job's state together. A job cut
// short by the process's end stays pending (a durable store's next process runs it).
func (w *worker) do(ctx context.Context, j Job) {
	defer func() {
		w.mu.Lock()
		delete(w.running, j.ID)
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}: // a place is free
		default:
		}
	}()
	a := w.a
	op := operations["/v1/"+j.Kind]
	state, rec := JobSucceeded, (*Record)(nil)
	if a.cfg.Downstream != "" {
		at := attempt{op: op, tenant: j.Tenant, key: j.Key, order: orderRequest{Ref: j.Ref, Amount: j.Amount, Currency: j.Currency}}
		if err := a.callDownstream(ctx, at); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.cfg.Logger.Printf("worker: job %s: downstream: %v", j.ID, err)
			state = JobFailed
		}
	}
	if state == JobSucceeded {
		r := j.recordOf(op.prefix+randomHex(12), a.cfg.Now())
		rec = &r
	}
	if _, err := w.jobs.FinishJob(context.WithoutCancel(ctx), j.ID, state, rec); err != nil {
		a.cfg.Logger.Printf("worker: job %s: %v", j.ID, err)
	}
}
