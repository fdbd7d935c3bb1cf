package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/faults/ports"
	"github.com/retrysafe/retrysafe/suites/selftest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// Settings of the reference API that `run` starts by itself: short enough that the expiry
// and crash properties run within --max-wait.
const (
	selfRetention   = "4s"
	selfLockTimeout = "3s"
	// selfDedupeRetention is the reference consumer's dedupe retention in `run --consumer`:
	// short enough that late-redelivery waits it out within a few seconds.
	selfDedupeRetention = "4s"
)

// managedReference describes the reference API that `run` starts by itself through the
// embedded managed target file: a `retrysafe serve` subprocess on a port reserved for it, on the given
// store (SQLite in a temporary folder by default), bound to the harness's downstream sink.
// The processes start later, with the faults (suites.SetUpFaults); tmp receives the SQLite
// file and is removed by the caller.
func managedReference(store, tmp string) (*targets.Target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	reserved, err := ports.Reserve(1)
	if err != nil {
		return nil, err
	}
	// SQLite goes into tmp: its DefaultDSN would create a temporary folder of its own.
	dsn := filepath.Join(tmp, "reference.db")
	if store != "sqlite" {
		if dsn, err = reference.DefaultDSN(store); err != nil {
			reserved.Close()
			return nil, err
		}
	}
	vars := map[string]string{
		"RETRYSAFE_BIN":          self,
		"RETRYSAFE_URL":          reserved.URLs()[0],
		"RETRYSAFE_REUSE_PORT":   "true",
		"RETRYSAFE_STORE":        store,
		"RETRYSAFE_DSN":          dsn,
		"RETRYSAFE_DURABLE":      fmt.Sprint(store != "memory"),
		"RETRYSAFE_RETENTION":    selfRetention,
		"RETRYSAFE_LOCK_TIMEOUT": selfLockTimeout,
	}
	t, err := targets.Parse("reference-managed.yaml (embedded)", examples.ReferenceManaged, func(name string) (string, bool) {
		if v, ok := vars[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	})
	if err != nil {
		reserved.Close()
		return nil, err
	}
	t.Own(reserved) // the process's port stays its own across kills and restarts
	return t, nil
}

// managedConsumer describes the reference consumer that `run --consumer TRANSPORT` starts by
// itself (selftest.ManagedConsumer), on the given store (SQLite in tmp by default), with a short
// lock timeout and dedupe retention so that every property runs within --max-wait; its broker
// topology is named from the run id (retrysafe-run-RUNID-TRANSPORT-...).
func managedConsumer(transport, store, tmp, runID string) (*targets.Target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dsn := filepath.Join(tmp, "consumer.db")
	if store != "sqlite" {
		if dsn, err = consumer.DefaultDSN(store); err != nil {
			return nil, err
		}
	}
	lock, _ := time.ParseDuration(selfLockTimeout)
	dedupe, _ := time.ParseDuration(selfDedupeRetention)
	t, err := selftest.ManagedConsumer(selftest.ConsumerSpec{Transport: transport, Store: store, DSN: dsn, Binary: self,
		LockTimeout: lock, DedupeRetention: dedupe, Names: "run-" + runID})
	if err != nil {
		return nil, fmt.Errorf("--consumer: %w", err)
	}
	return t, nil
}

// managedChain describes the reference chain that `run --chain TRANSPORT` starts by itself
// (selftest.ManagedChain): the reference client, API and consumer, the API and the consumer on
// SQLite in tmp, the exchange or stream and the consumer's queue named from the run id (on
// webhook: the API's signed webhooks passed on to the consumer by the harness's receiver).
func managedChain(transport, tmp, runID string) (*targets.Target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	t, err := selftest.ManagedChain(selftest.ChainSpec{Transport: transport, Binary: self, Dir: tmp, Names: "run-" + runID})
	if err != nil {
		return nil, fmt.Errorf("--chain: %w", err)
	}
	return t, nil
}
