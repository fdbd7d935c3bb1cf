package selftest

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/faults/ports"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// The rows of the asynchronous API: the reference API in its asynchronous mode (serve --async:
// 202, a status resource, the record made later by its worker), started through
// reference-async.yaml on the stores that keep its jobs durably. The correct API runs the
// properties whose judgement the settling changes (asyncProperties); each async mutant runs
// only the property that catches it.

// AsyncSpec says which asynchronous reference API ManagedAsync describes.
type AsyncSpec struct {
	// Store and DSN are the API's store (DSN "" = the store's default).
	Store, DSN string
	// Binary is the retrysafe binary the lifecycle starts.
	Binary string
	// Mutant is the API's mutant ("" = correct).
	Mutant string
	// Retention and LockTimeout are the API's (and what the file declares).
	Retention, LockTimeout time.Duration
	// Settle is the operations' async.settle (0: asyncSettle).
	Settle time.Duration
}

// asyncSettle is the self-test's async.settle: the worker makes a record within milliseconds,
// but crash-after-claim's operation waits from its 202 through a kill and a restart, which on a
// loaded runner took several seconds; the async-lost-on-crash cell waits it out once.
const asyncSettle = 8 * time.Second

// asyncStores are the stores of the async rows (the reference's async mutants' stores).
var asyncStores = []string{"sqlite", "postgres"}

// asyncProperties are the properties the correct asynchronous API runs in the self-test: a
// replay, a race loser, a mismatch, a retry after a dropped response and after a crash, and load.
const asyncProperties = "property:replay || property:race || property:mismatch || property:dropped-response || property:crash-after-claim || property:load"

// asyncShape names the async rows in the matrix.
const asyncShape = "async"

// ManagedAsync describes the asynchronous reference API that the harness starts through the
// embedded reference-async.yaml: one process, on a port reserved for it.
func ManagedAsync(as AsyncSpec) (*targets.Target, error) {
	reserved, err := ports.Reserve(1)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{
		"RETRYSAFE_BIN": as.Binary, "RETRYSAFE_URL": reserved.URLs()[0], "RETRYSAFE_REUSE_PORT": "true",
		"RETRYSAFE_STORE": as.Store, "RETRYSAFE_DSN": as.DSN, "RETRYSAFE_DURABLE": fmt.Sprint(as.Store != "memory"),
		"RETRYSAFE_MUTANT":       cmp.Or(as.Mutant, "none"),
		"RETRYSAFE_RETENTION":    cmp.Or(as.Retention, reference.DefaultRetention).String(),
		"RETRYSAFE_LOCK_TIMEOUT": cmp.Or(as.LockTimeout, reference.DefaultLockTimeout).String(),
		"RETRYSAFE_ASYNC_SETTLE": cmp.Or(as.Settle, asyncSettle).String(),
	}
	return parseOwning("reference-async.yaml (embedded)", examples.ReferenceAsync, vars, reserved)
}

// runAsync starts the asynchronous reference API (store, mutant) and runs the selected
// properties against it.
func (st *stores) runAsync(ctx context.Context, store string, m reference.Mutant, labelFilter string) (*reports.Run, error) {
	sp, err := st.space(ctx, store)
	if err != nil {
		return nil, err
	}
	defer st.release(sp)
	dsn := sp.dsn
	if store == "sqlite" {
		dsn = filepath.Join(st.dir, fmt.Sprintf("async-%d.db", sp.cell))
	}
	t, err := ManagedAsync(AsyncSpec{Store: store, DSN: dsn, Binary: st.opts.Binary, Mutant: string(m),
		Retention: max(st.opts.Retention, 10*st.opts.LockTimeout), LockTimeout: st.opts.LockTimeout})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return st.run(ctx, t, sp.cell, labelFilter, 0)
}

// correctAsyncJobs are the runs of the correct asynchronous API on one store (none on the stores
// that are not asyncStores).
func (st *stores) correctAsyncJobs(store string) []*job {
	if !slices.Contains(asyncStores, store) {
		return nil
	}
	return []*job{{name: "correct api " + store + " " + asyncShape, pg: store == "postgres", async: true,
		run: func(ctx context.Context) ([]Correct, *Cell, error) {
			run, err := st.runAsync(ctx, store, reference.MutantNone, asyncProperties)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", asyncShape, err)
			}
			return correctResults(store, asyncShape, run), nil, nil
		}}}
}
