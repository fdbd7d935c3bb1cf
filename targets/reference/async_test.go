package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// asyncStoresUnderTest are the stores that keep jobs.
var asyncStoresUnderTest = []string{"memory", "sqlite", "postgres"}

// startWorker runs an API's worker until the test ends (or the returned stop).
func startWorker(t *testing.T, api *API) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		api.WorkerLoop(ctx)
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// operation reads a status resource.
func (h *apiHarness) operation(tenant, location string) (int, operationBody) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.url+location, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.setTenant(req, tenant)
	r := h.do(req)
	var op operationBody
	if r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, &op); err != nil {
			h.t.Fatalf("GET %s: %v: %s", location, err, r.body)
		}
	}
	return r.status, op
}

// settle polls a status resource until its operation is no longer pending, at most within.
func (h *apiHarness) settle(tenant, location string, within time.Duration) operationBody {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for {
		status, op := h.operation(tenant, location)
		if status != http.StatusOK {
			h.t.Fatalf("GET %s: %d", location, status)
		}
		if op.Status != string(JobPending) || time.Now().After(deadline) {
			return op
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An accepted POST answers 202 with its operation's reference, its replay the same; the worker
// makes one record, and the status resource says so and shows it, to its tenant only.
func TestAsyncOperation(t *testing.T) {
	for _, store := range asyncStoresUnderTest {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			h := newAPIHarness(t, store, apiOpts{async: true, downstream: true})
			body := orderJSON("ref-async", 900, "EUR")
			first := h.post(ordersPath, "alice", "async-1", body)
			wantStatus(t, first, http.StatusAccepted)
			loc := first.header.Get("Location")
			if !strings.HasPrefix(loc, OperationsPath+"/op_") || operationID(first.body) != strings.TrimPrefix(loc, OperationsPath+"/") {
				t.Fatalf("Location %q, body %s", loc, first.body)
			}
			again := h.post(ordersPath, "alice", "async-1", body)
			wantStatus(t, again, http.StatusAccepted)
			if !again.replayed() || again.header.Get("Location") != loc || string(again.body) != string(first.body) {
				t.Errorf("replay %s, Location %q: want the first answer %s, Location %q", again, again.header.Get("Location"), first.body, loc)
			}
			op := h.settle("alice", loc, 10*time.Second)
			if op.Status != string(JobSucceeded) {
				t.Fatalf("operation %+v did not succeed", op)
			}
			recs := h.list("alice", ordersPath, "ref-async")
			if recs.Count != 1 {
				t.Fatalf("%d records, want 1", recs.Count)
			}
			var result orderBody
			if err := json.Unmarshal(op.Result, &result); err != nil || result.ID != recs.Items[0].ID {
				t.Errorf("result %s (%v), record %s", op.Result, err, recs.Items[0].ID)
			}
			if n := len(h.down.calls()); n != 1 {
				t.Errorf("%d downstream calls, want 1", n)
			}
			if status, _ := h.operation("bob", loc); status != http.StatusNotFound {
				t.Errorf("another tenant's GET %s: %d, want 404", loc, status)
			}
		})
	}
}

// A job accepted by a process that dies before its record is run by the next process on the
// same durable store (the correct worker reads the pending jobs from the store).
func TestAsyncResumesAfterRestart(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			shown, saw := showAsyncLostOnCrash(t, newAPIHarness(t, store, apiOpts{async: true, downstream: true}))
			if shown {
				t.Errorf("the correct API lost the job: %s", saw)
			}
		})
	}
}

// An asynchronous API needs a store that keeps jobs, and the async mutants need the asynchronous
// mode.
func TestAsyncNeedsJobs(t *testing.T) {
	if _, err := NewAPI(Config{Store: fakeStoreWithoutJobs{NewMemoryStore()}, Tenants: []string{"a"}, Async: true}); err == nil ||
		!strings.Contains(err.Error(), "keeps no asynchronous operations") {
		t.Errorf("async on a store without jobs: %v", err)
	}
	if _, err := NewAPI(Config{Store: NewMemoryStore(), Tenants: []string{"a"}, Mutant: MutantAsyncNewReference}); err == nil ||
		!strings.Contains(err.Error(), "--async") {
		t.Errorf("an async mutant without --async: %v", err)
	}
}

// fakeStoreWithoutJobs is a store that keeps no jobs (the Redis store's case).
type fakeStoreWithoutJobs struct{ s *MemoryStore }

func (f fakeStoreWithoutJobs) Claim(ctx context.Context, r ClaimRequest) (ClaimResult, error) {
	return f.s.Claim(ctx, r)
}
func (f fakeStoreWithoutJobs) Lookup(ctx context.Context, scope string) (*KeyRow, error) {
	return f.s.Lookup(ctx, scope)
}
func (f fakeStoreWithoutJobs) Complete(ctx context.Context, c Completion) (bool, error) {
	return f.s.Complete(ctx, c)
}
func (f fakeStoreWithoutJobs) Release(ctx context.Context, scope string, token int64) error {
	return f.s.Release(ctx, scope, token)
}
func (f fakeStoreWithoutJobs) AddRecord(ctx context.Context, r Record) error {
	return f.s.AddRecord(ctx, r)
}
func (f fakeStoreWithoutJobs) Records(ctx context.Context, tenant, kind, ref string) ([]Record, error) {
	return f.s.Records(ctx, tenant, kind, ref)
}
func (f fakeStoreWithoutJobs) Prune(ctx context.Context, before time.Time) (int, error) {
	return f.s.Prune(ctx, before)
}
func (f fakeStoreWithoutJobs) AddEvent(ctx context.Context, e OutboxEvent) error {
	return f.s.AddEvent(ctx, e)
}
func (f fakeStoreWithoutJobs) PendingEvents(ctx context.Context, n int) ([]OutboxEvent, error) {
	return f.s.PendingEvents(ctx, n)
}
func (f fakeStoreWithoutJobs) MarkEventSent(ctx context.Context, id string, at time.Time) error {
	return f.s.MarkEventSent(ctx, id, at)
}
func (f fakeStoreWithoutJobs) Close() error { return nil }

// asyncMutantCases are the HTTP-level scenarios of the async mutants (TestMutantsShowTheirBugs).
func asyncMutantCases() map[Mutant]mutantCase {
	async := apiOpts{async: true, downstream: true}
	return map[Mutant]mutantCase{
		MutantAsyncRetryNewJob:  {async, showAsyncTwoRecords},
		MutantAsyncNewReference: {async, showAsyncTwoRecords},
		MutantAsyncLostOnCrash:  {async, showAsyncLostOnCrash},
	}
}

// showAsyncTwoRecords sends an operation and its retry, and settles every operation they name.
func showAsyncTwoRecords(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-twice", 900, "EUR")
	first := h.post(ordersPath, "alice", "twice", body)
	wantStatus(t, first, http.StatusAccepted)
	again := h.post(ordersPath, "alice", "twice", body)
	wantStatus(t, again, http.StatusAccepted)
	locs := []string{first.header.Get("Location"), again.header.Get("Location")}
	for _, loc := range locs {
		h.settle("alice", loc, 10*time.Second)
	}
	n := h.count("alice", ordersPath, "ref-twice")
	return n > 1, fmt.Sprintf("references %v, %d records", locs, n)
}

// showAsyncLostOnCrash holds the worker's downstream call, stops the worker (its process "dies":
// the job was accepted and is pending in the store), starts another API on the same store and
// waits for the operation to settle.
func showAsyncLostOnCrash(t *testing.T, h *apiHarness) (bool, string) {
	h.down.holdNext(1)
	first := h.post(ordersPath, "alice", "crash", orderJSON("ref-crash", 900, "EUR"))
	wantStatus(t, first, http.StatusAccepted)
	h.down.waitHeld(t)
	h.stopWorker()
	next, err := NewAPI(h.api.cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.api = next
	startWorker(t, next)
	h.down.releaseAll()
	srv := httptest.NewServer(next)
	t.Cleanup(srv.Close)
	h.url = srv.URL
	op := h.settle("alice", first.header.Get("Location"), 2*time.Second)
	n := h.count("alice", ordersPath, "ref-crash")
	return op.Status == string(JobPending) && n == 0, fmt.Sprintf("after the restart: operation %s, %d records", op.Status, n)
}
