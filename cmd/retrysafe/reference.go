package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

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
// embedded managed target file: a `retrysafe serve` subprocess on a free port, on the given
// store (SQLite in a temporary folder by default), bound to the harness's downstream sink.
// The processes start later, with the faults (suites.SetUpFaults); tmp receives the SQLite
// file and is removed by the caller.
func managedReference(store, tmp string) (*targets.Target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	// SQLite goes into tmp: its DefaultDSN would create a temporary folder of its own.
	dsn := filepath.Join(tmp, "reference.db")
	if store != "sqlite" {
		if dsn, err = reference.DefaultDSN(store); err != nil {
			return nil, err
		}
	}
	vars := map[string]string{
		"RETRYSAFE_BIN":          self,
		"RETRYSAFE_URL":          "http://" + addr,
		"RETRYSAFE_STORE":        store,
		"RETRYSAFE_DSN":          dsn,
		"RETRYSAFE_DURABLE":      fmt.Sprint(store != "memory"),
		"RETRYSAFE_RETENTION":    selfRetention,
		"RETRYSAFE_LOCK_TIMEOUT": selfLockTimeout,
	}
	return targets.Parse("reference-managed.yaml (embedded)", examples.ReferenceManaged, func(name string) (string, bool) {
		if v, ok := vars[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	})
}

// managedConsumer describes the reference consumer that `run --consumer TRANSPORT` starts by
// itself (selftest.ManagedConsumer), on the given store (SQLite in tmp by default), with a short
// lock timeout and dedupe retention so that every property runs within --max-wait.
func managedConsumer(transport, store, tmp string) (*targets.Target, error) {
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
		LockTimeout: lock, DedupeRetention: dedupe})
	if err != nil {
		return nil, fmt.Errorf("--consumer: %w", err)
	}
	return t, nil
}
