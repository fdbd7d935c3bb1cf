package suites

import (
	"context"
	"fmt"

	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// refEnv serves the reference API (memory store) on n instances, each with its own store,
// and returns a session of a harness against them.
func refEnv(t *testing.T, m reference.Mutant, n int, s Settings) *S {
	t.Helper()
	var urls []string
	var internal atomic.Value // the first harness-internal header a server received
	t.Cleanup(func() {
		if name := internal.Load(); name != nil {
			t.Errorf("the target received the harness-internal header %s", name)
		}
	})
	for range n {
		api, err := reference.NewAPI(reference.Config{
			Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"}, Mutant: m,
			Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout,
			WorkDelay: reference.DefaultWorkDelay,
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for name := range r.Header {
				if strings.HasPrefix(name, "X-Vegeta") || name == LoadItemHeader {
					internal.CompareAndSwap(nil, name)
				}
			}
			api.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	vars := map[string]string{"RETRYSAFE_URL": strings.Join(urls, ",")}
	target, err := targets.Parse("reference.yaml", examples.Reference, func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	target.SharedStore = n == 1
	t.Cleanup(func() { target.Close() })
	if s.Seed == 0 {
		s.Seed = 1
	}
	h, err := Open(context.Background(), target, WithSettings(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h.Env().Session(context.Background())
}

func TestLoadPassesTheCorrectAPI(t *testing.T) {
	e := refEnv(t, reference.MutantNone, 1, Settings{})
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
	e := refEnv(t, reference.MutantRace, 1, Settings{})
	res := e.Load(100, time.Second).Result
	if !strings.Contains(res.AnomalyCounts(), string(reports.KindDuplicateRecord)) {
		t.Fatalf("no duplicate found in the race mutant: %s", res.AnomalyCounts())
	}
}

func TestLoadCatchesTwoMemoryInstances(t *testing.T) {
	e := refEnv(t, reference.MutantNone, 2, Settings{})
	res := e.Load(100, time.Second).Result
	if !strings.Contains(res.AnomalyCounts(), string(reports.KindDuplicateRecord)) {
		t.Fatalf("no duplicate found across two memory instances: %s", res.AnomalyCounts())
	}
}

func TestLastByteBurst(t *testing.T) {
	e := refEnv(t, reference.MutantNone, 1, Settings{})
	if got := e.raceMode(); got != RaceModeLastByte {
		t.Fatalf("race mode of an http target = %q, want %q", got, RaceModeLastByte)
	}
	op := e.NewOp(e.Target.Operations[0])
	atts := e.Burst(op, 16)
	statuses := map[string]int{}
	for _, a := range atts {
		statuses[strconv.Itoa(a.Status)+a.RespHeader.Get("Idempotent-Replayed")]++
		if a.Seq == 0 || a.Outcome != history.OK || !strings.Contains(a.Note, "last-byte") {
			t.Fatalf("attempt not recorded as a last-byte answer: %s", a)
		}
		// The server read the body after the release, never before: the final byte was held.
		at, err := strconv.ParseInt(a.RespHeader.Get(arrivalHeader), 10, 64)
		if err != nil || at < a.Start.UnixNano() {
			t.Errorf("body read at %d, before the release at %d", at, a.Start.UnixNano())
		}
	}
	// One execution; the others arrived while it ran (409) or after (a replay).
	if statuses["201"] != 1 || statuses["409"]+statuses["201true"] != 15 {
		t.Errorf("statuses %v, want one 201 and fifteen 409s or replays", statuses)
	}
	if _, err := ArrivalSpread(atts); err != nil {
		t.Error(err)
	}
	if n := len(e.History.ByKey(op.Key)); n != 16 {
		t.Errorf("%d attempts of the key in the history, want 16", n)
	}
	e.Settings.RaceMode = RaceModeBarrier
	if got := e.raceMode(); got != RaceModeBarrier {
		t.Errorf("race mode = %q, want the barrier when asked", got)
	}
	if atts := e.Burst(e.NewOp(e.Target.Operations[0]), 4); len(atts) != 4 || atts[0].RespHeader.Get(arrivalHeader) == "" {
		t.Errorf("barrier burst: %d answers, arrival %q", len(atts), atts[0].RespHeader.Get(arrivalHeader))
	}
}

func TestWireRequest(t *testing.T) {
	e := refEnv(t, reference.MutantNone, 1, Settings{})
	rc, err := e.prepareRaw(t.Context(), e.NewOp(e.Target.Operations[0]), 0)
	if err != nil {
		t.Fatal(err)
	}
	wire := string(rc.wire)
	for _, want := range []string{"POST /v1/orders HTTP/1.1\r\nHost: 127.0.0.1:", "\r\nIdempotency-Key: ", "\r\nX-Retrysafe-Arrival: 1\r\n",
		"\r\nContent-Length: " + strconv.Itoa(len(rc.a.ReqBody)) + "\r\n\r\n{"} {
		if !strings.Contains(wire, want) {
			t.Errorf("wire form lacks %q:\n%s", want, wire)
		}
	}
	if !strings.HasSuffix(wire, string(rc.a.ReqBody)) {
		t.Errorf("wire form does not end with the body:\n%s", wire)
	}
}
