package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// Settings of the reference API that `run` starts by itself: short enough that the expiry
// and crash properties run within --max-wait.
const (
	selfRetention   = "4s"
	selfLockTimeout = "3s"
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

// checkReachable makes sure every instance answers HTTP before any property runs.
func checkReachable(ctx context.Context, t *targets.Target) error {
	hc := t.ObserverClient(5*time.Second, 0)
	defer hc.CloseIdleConnections()
	for _, in := range t.Instances {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.URL.String(), nil)
		resp, err := hc.Do(req)
		cancel()
		if err != nil {
			return fmt.Errorf("target %s is unreachable: %v", in.URL.Redacted(), err)
		}
		resp.Body.Close()
	}
	return nil
}
