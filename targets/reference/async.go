package reference

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// The request side of the asynchronous mode (Config.Async, jobs.go): the 202 and its reference,
// the replays of the async mutants, and the status resource.

// setUpAsync checks an asynchronous API's store and serves its status resource.
func (a *API) setUpAsync() error {
	if !a.cfg.Async {
		if a.cfg.Mutant.needsAsync() {
			return errors.New("reference: mutant " + string(a.cfg.Mutant) + " breaks the asynchronous mode: serve it with --async")
		}
		return nil
	}
	jobs, ok := a.cfg.Store.(Jobs)
	if !ok {
		return errors.New("reference: --async: " + ErrNoJobs.Error())
	}
	if a.cfg.Events != nil {
		return errors.New("reference: --async with --events: an asynchronous operation publishes no event (its record is the worker's)")
	}
	a.worker = newWorker(a, jobs)
	a.mux.HandleFunc("GET "+OperationsPath+"/{id}", a.operationStatus)
	return nil
}

// accept runs a claimed POST of an asynchronous API: its answer (202, the operation's
// reference) and the operation's pending job commit with the key in one transaction; the worker
// makes the record later.
func (a *API) accept(w http.ResponseWriter, ctx context.Context, at attempt, token int64) {
	if delay := a.cfg.WorkDelay + at.delay; delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
	id := "op_" + randomHex(12)
	job := a.newJob(at, id)
	resp := Response{Status: http.StatusAccepted, Body: operationJSON(id, JobPending, nil)}
	c := Completion{Scope: at.scope, Token: token, Now: a.cfg.Now(), Response: resp, Job: &job}
	if status := a.takeFailure(); status != 0 { // a handler error before the operation was accepted
		a.cfg.Logger.Printf("injected failure: %d", status)
		c.Response, c.Job = injectedFailure(status), nil
	}
	ok, err := a.cfg.Store.Complete(ctx, c)
	switch {
	case err != nil:
		a.cfg.Logger.Printf("complete: %v", err)
		writeProblem(w, http.StatusServiceUnavailable, "store error")
	case !ok:
		writeProblem(w, http.StatusConflict, "this attempt was superseded by a retry after the lock timeout")
	default:
		if c.Job != nil {
			a.worker.enqueue(job)
		}
		writeStored(w, c.Response, false)
	}
}

// newJob is the job of an operation accepted for an attempt.
func (a *API) newJob(at attempt, operation string) Job {
	return Job{ID: "job_" + randomHex(12), Operation: operation, Tenant: at.tenant, Kind: at.op.kind, Ref: at.order.Ref,
		Key: at.key, Amount: at.order.Amount, Currency: at.order.Currency, Created: a.cfg.Now(), State: JobPending}
}

// replayOperation is the replay of a stored 202 under the async mutants; it reports whether it
// answered (else the stored answer is replayed as usual).
func (a *API) replayOperation(w http.ResponseWriter, ctx context.Context, at attempt, resp Response) bool {
	if !a.cfg.Async || resp.Status != http.StatusAccepted {
		return false
	}
	switch a.cfg.Mutant {
	case MutantAsyncRetryNewJob: // a second job under the operation the replay names
		job := a.newJob(at, operationID(resp.Body))
		if err := a.cfg.Store.(Jobs).AddJob(ctx, job); err != nil {
			a.cfg.Logger.Printf("async-retry-new-job: %v", err)
			return false
		}
		a.worker.enqueue(job)
	case MutantAsyncNewReference: // a new operation and its own job, answered as new
		id := "op_" + randomHex(12)
		job := a.newJob(at, id)
		if err := a.cfg.Store.(Jobs).AddJob(ctx, job); err != nil {
			a.cfg.Logger.Printf("async-new-reference: %v", err)
			return false
		}
		a.worker.enqueue(job)
		writeStored(w, Response{Status: http.StatusAccepted, Body: operationJSON(id, JobPending, nil)}, false)
		return true
	}
	return false
}

// operationStatus answers GET /v1/operations/{id}: the operation's state from its jobs in the
// store, and its record once it succeeded; 404 for an operation the tenant does not have.
func (a *API) operationStatus(w http.ResponseWriter, r *http.Request) {
	tenant, fail := a.authenticate(r)
	if fail != nil {
		writeProblem(w, fail.status, fail.detail)
		return
	}
	id := r.PathValue("id")
	jobs, err := a.cfg.Store.(Jobs).OperationJobs(r.Context(), tenant, id)
	if err != nil {
		a.cfg.Logger.Printf("operation %s: %v", id, err)
		writeProblem(w, http.StatusInternalServerError, "store error")
		return
	}
	if len(jobs) == 0 {
		writeProblem(w, http.StatusNotFound, "no such operation")
		return
	}
	state := operationState(jobs)
	var result []byte
	if j := jobs[0]; state == JobSucceeded {
		object := "order"
		if j.Kind == "refunds" {
			object = "refund"
		}
		result, _ = json.Marshal(orderBody{j.RecordID, object, j.Ref, j.Amount, j.Currency})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(operationJSON(id, state, result))
}

// setOperationLocation sets the Location of an answer that is an accepted operation: its status
// resource (a replay of the stored 202 carries it as the first answer did).
func setOperationLocation(w http.ResponseWriter, resp Response) {
	if resp.Status != http.StatusAccepted {
		return
	}
	if id := operationID(resp.Body); id != "" {
		w.Header().Set("Location", OperationsPath+"/"+id)
	}
}
