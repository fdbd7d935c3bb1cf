package api

import (
	"fmt"

	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"

	"github.com/retrysafe/retrysafe/targets/reference"
)

func TestLoadPassesTheCorrectAPI(t *testing.T) {
	e := frameworktest.RefEnv(t, reference.MutantNone, 1, framework.Settings{})
	run := e.Load(100, time.Second)
	res := run.Result
	if run.Err != nil || len(res.Anomalies) > 0 || len(run.CountErrors) > 0 {
		t.Fatalf("err %v, count errors %v, anomalies:\n%s", run.Err, run.CountErrors, fmt.Sprint(res.Anomalies))
	}
	hits := run.Fresh + run.Pairs + run.Retries
	if hits < 50 || run.Pairs == 0 || run.Retries == 0 {
		t.Errorf("hits: %d fresh, %d pairs, %d retries; want about 100 with pairs and retries", run.Fresh, run.Pairs, run.Retries)
	}
	if got, want := res.Attempts, hits+run.Pairs; got != want {
		t.Errorf("%d attempts recorded, want %d (every hit, and the twin of every pair)", got, want)
	}
	if got, want := res.Ops, run.Fresh+run.Pairs; got != want {
		t.Errorf("%d operations, want %d", got, want)
	}
	if res.First.N == 0 || res.Replay.N == 0 {
		t.Errorf("latencies: first %+v, replay %+v; want both measured", res.First, res.Replay)
	}
	f := run.Figures()
	for _, name := range []string{"throughput", "latency_first_p50", "latency_replay_p99", "statuses", "plot"} {
		if f[name] == "" {
			t.Errorf("figure %s missing: %v", name, f)
		}
	}
	if run.Plot == nil {
		t.Errorf("no plot written: %v", run.PlotErr)
	}
}

func TestLoadCatchesTheRaceMutant(t *testing.T) {
	e := frameworktest.RefEnv(t, reference.MutantRace, 1, framework.Settings{})
	res := e.Load(100, time.Second).Result
	if !strings.Contains(res.AnomalyCounts(), string(reports.KindDuplicateRecord)) {
		t.Fatalf("no duplicate found in the race mutant: %s", res.AnomalyCounts())
	}
}

func TestLoadCatchesTwoMemoryInstances(t *testing.T) {
	e := frameworktest.RefEnv(t, reference.MutantNone, 2, framework.Settings{})
	res := e.Load(100, time.Second).Result
	if !strings.Contains(res.AnomalyCounts(), string(reports.KindDuplicateRecord)) {
		t.Fatalf("no duplicate found across two memory instances: %s", res.AnomalyCounts())
	}
}
