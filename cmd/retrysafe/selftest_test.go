package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// selftestRunID finds the self-test's run id in its first line.
var selftestRunID = regexp.MustCompile(`self-test (st[0-9a-f]+):`)

// leftOf lists what a self-test's run id names in the shared services: PostgreSQL schemas,
// Redis keys and broker topologies.
func leftOf(t *testing.T, runID string) (schemas []string, keys []string, topology broker.Inventory) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, _ := reference.DefaultDSN("postgres")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1", "rs\\_"+runID+"\\_%")
	if err != nil {
		t.Fatal(err)
	}
	if schemas, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	url, _ := reference.DefaultDSN("redis")
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if keys, err = rdb.Keys(ctx, "retrysafe-selftest:"+runID+":*").Result(); err != nil {
		t.Fatal(err)
	}
	inv, err := broker.TakeInventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return schemas, keys, inv.WithPrefix(broker.DefaultNamePrefix + "-" + runID + "-")
}

// A self-test interrupted with Ctrl-C halfway, while its cells hold schemas, Redis keys, broker
// topologies and processes, leaves none of them behind, and still writes its reports.
func TestSelftestInterruptedLeavesNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs part of the self-test")
	}
	bin := buildRetrysafe(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "selftest", "--stores", "postgres,redis", "--no-clients", "--mutants", "no-dedupe,race",
		"--parallel", "6", "--report-dir", filepath.Join(dir, "report"))
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	var runID string
	var during []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		if m := selftestRunID.FindStringSubmatch(out.String()); m != nil && runID == "" {
			runID = m[1]
		}
		if runID != "" && strings.Count(out.String(), "\n") > 12 {
			schemas, _, _ := leftOf(t, runID)
			if len(schemas) > 0 && len(pidsRunning(bin)) > 1 {
				during = schemas
				break // cells are running: schemas exist, processes run
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the self-test did not get going within 90 s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the self-test did not end within 60 s of Ctrl-C:\n%s", out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitIncomplete {
		t.Errorf("exit %d, want %d (incomplete)", code, exitIncomplete)
	}
	schemas, keys, topology := leftOf(t, runID)
	if len(schemas) > 0 || len(keys) > 0 || !topology.Empty() {
		t.Errorf("interrupted with %v in use, the self-test left schemas %v, %d Redis keys, %s", during, schemas, len(keys), topology)
	}
	if pids := pidsRunning(bin); len(pids) > 0 {
		t.Errorf("processes of the self-test still run after it ended: %v", pids)
	}
	if _, err := os.Stat(filepath.Join(dir, "report", "selftest.json")); err != nil {
		t.Errorf("no report after the interrupt: %v", err)
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "report", "cells", "*.log")); len(logs) == 0 {
		t.Error("no cell logs after the interrupt")
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}
