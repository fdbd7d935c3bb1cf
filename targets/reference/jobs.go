package reference

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// The reference API's asynchronous operations (Config.Async): a POST claims its key, stores the
// key's answer (202 with the operation's reference) and a pending job in one transaction
// (Completion.Job), and a worker (worker.go) makes the business record later, reading the pending
// jobs from the store, so that a job survives a restart on a durable store. The status resource,
// GET /v1/operations/{id}, reads the operation's jobs from the store.

// JobState is where a job is.
type JobState string

// The states of a job; an operation's state is its jobs' (operationState).
const (
	JobPending   JobState = "pending"
	JobSucceeded JobState = "succeeded"
	JobFailed    JobState = "failed"
)

// Job is one piece of work of an asynchronous operation: the business record it makes. The
// correct API has one job per operation; the async-retry-new-job mutant adds a second one under
// the same operation.
type Job struct {
	// ID is the job's own id; Operation the operation's, which its reference names.
	ID, Operation string
	// Tenant, Kind, Ref, Amount and Currency are the record to make; Key is the operation's
	// idempotency key (its downstream call derives its key from it).
	Tenant, Kind, Ref, Key string
	Amount                 int64
	Currency               string
	// Created is when the job was written; it runs Config.AsyncDelay later at the earliest.
	Created time.Time
	// State is the job's; RecordID the record a succeeded job made.
	State    JobState
	RecordID string
}

// Jobs is what a store keeps of the asynchronous operations besides keys and records
// (Completion.Job writes a job with its key's answer). The memory and SQL stores keep them.
type Jobs interface {
	// AddJob writes a pending job outside any key (the async mutants).
	AddJob(ctx context.Context, j Job) error
	// PendingJobs returns at most n pending jobs, oldest first.
	PendingJobs(ctx context.Context, n int) ([]Job, error)
	// FinishJob ends a pending job: its state and, when it succeeded, its record, in one
	// transaction. It reports false, writing nothing, when the job is no longer pending (another
	// worker finished it).
	FinishJob(ctx context.Context, id string, state JobState, rec *Record) (bool, error)
	// OperationJobs returns the jobs of a tenant's operation, oldest first (none: it does not
	// exist for that tenant).
	OperationJobs(ctx context.Context, tenant, operation string) ([]Job, error)
}

// ErrNoJobs says a store keeps no asynchronous operations.
var ErrNoJobs = errors.New("this store keeps no asynchronous operations (use memory, sqlite or postgres)")

// OperationsPath is the path of the status resources: OperationsPath + "/" + id.
const OperationsPath = "/v1/operations"

// operationBody is the JSON of an operation: what its 202 answer and its status resource show.
type operationBody struct {
	ID     string          `json:"id"`
	Object string          `json:"object"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
}

// operationJSON renders an operation in a state, with its result (the record) when it has one.
func operationJSON(id string, state JobState, result []byte) []byte {
	b, _ := json.Marshal(operationBody{ID: id, Object: "operation", Status: string(state), Result: result})
	return b
}

// operationState is an operation's state from its jobs: pending while one is, failed when one
// failed, else succeeded.
func operationState(jobs []Job) JobState {
	state := JobSucceeded
	for _, j := range jobs {
		switch j.State {
		case JobPending:
			return JobPending
		case JobFailed:
			state = JobFailed
		}
	}
	return state
}

// operationID returns the id an operation's JSON carries ("" when it is none).
func operationID(body []byte) string {
	var op operationBody
	if json.Unmarshal(body, &op) != nil || op.Object != "operation" {
		return ""
	}
	return op.ID
}

// recordOf is the record a job makes.
func (j Job) recordOf(id string, now time.Time) Record {
	return Record{ID: id, Tenant: j.Tenant, Kind: j.Kind, Ref: j.Ref, Amount: j.Amount, Currency: j.Currency, Created: now}
}
