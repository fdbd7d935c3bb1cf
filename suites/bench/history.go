package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/history"
)

// wholeSample is the number of attempts kept whole to measure what compaction saves.
const wholeSample = 100_000

// historyBench is benchmark 4: memory per recorded attempt of a load-shaped history, compact
// vs whole, and the time check.Load takes over it.
func historyBench(ctx context.Context, o *Options) error {
	t, err := targets.Parse("reference.yaml (embedded)", examples.Reference, func(string) (string, bool) { return "", false })
	if err != nil {
		return err
	}
	defer t.Close()
	p := t.Profile
	secrets := []string{"Bearer alice", "alice", "Bearer bob", "bob"}

	compact := history.New(history.NewRedactor(secrets, nil))
	stop := compact.Compact(framework.LoadCompactOptions(p))
	gen := newSynth()
	before := heapInUse()
	recording := record(compact, gen, o.HistoryN)
	compactBytes := float64(heapInUse()-before) / float64(o.HistoryN)
	stop()
	if err := ctx.Err(); err != nil {
		return err
	}

	counts := make(map[string]int, gen.ops)
	for i := range gen.ops {
		counts[synthKey(i)] = 1
	}
	runtime.GC()
	started := time.Now()
	res := check.Load(compact.After(0), counts, p, 0)
	checking := time.Since(started)
	if res.Attempts != o.HistoryN || len(res.Anomalies) > 0 {
		return fmt.Errorf("the check of the synthetic history is wrong: %d attempts, %d anomalies", res.Attempts, len(res.Anomalies))
	}
	runtime.KeepAlive(compact)
	compact, counts = nil, nil

	whole := history.New(history.NewRedactor(secrets, nil))
	gen = newSynth()
	before = heapInUse()
	wholeRecording := record(whole, gen, wholeSample)
	wholeBytes := float64(heapInUse()-before) / wholeSample
	runtime.KeepAlive(whole)

	w := o.Out
	fmt.Fprintf(w, "4. History cost: a load-shaped history (70%% fresh, 15%% concurrent pairs answered 201+409,\n"+
		"   15%% sequential replays; %d-byte answers)\n", len(synthBody(0)))
	fmt.Fprintf(w, "   compact (%d attempts):  %6.0f bytes/attempt, %.2fµs to record each (goal < 300 B: %s)\n",
		o.HistoryN, compactBytes, float64(recording.Microseconds())/float64(o.HistoryN), verdict(compactBytes < 300))
	fmt.Fprintf(w, "   whole (%d attempts):    %6.0f bytes/attempt, %.2fµs to record each -> compact is %.1fx smaller\n",
		wholeSample, wholeBytes, float64(wholeRecording.Microseconds())/wholeSample, wholeBytes/compactBytes)
	fmt.Fprintf(w, "   check.Load over %d attempts (%d operations): %s (goal < 5s: %s)\n\n",
		res.Attempts, res.Ops, checking.Round(time.Millisecond), verdict(checking < 5*time.Second))
	return nil
}

// record adds n generated attempts to h and returns the time spent in History.Add alone.
func record(h *history.History, gen *synth, n int) time.Duration {
	var spent time.Duration
	batch := make([]history.Attempt, 0, 4096)
	for n > 0 {
		batch = batch[:0]
		for range min(n, cap(batch)) {
			batch = append(batch, gen.next())
		}
		started := time.Now()
		for _, a := range batch {
			h.Add(a)
		}
		spent += time.Since(started)
		n -= len(batch)
	}
	return spent
}

// heapInUse returns the live heap after two collections.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// synth generates the attempts of a load run against the reference API as the harness's
// client records them: every attempt with its own headers and bodies.
type synth struct {
	rng     *rand.Rand
	ops     int
	pending []history.Attempt // the twin of a pair, or nothing
	t       time.Time
}

func newSynth() *synth {
	return &synth{rng: rand.New(rand.NewPCG(1, 2)), t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func synthKey(op int) string { return "rs-0123abcd-" + strconv.Itoa(op) }

func synthBody(op int) []byte {
	return fmt.Appendf(nil, `{"id":"ord_%024x","object":"order","ref":"rs-0123abcd-%07d","amount":1000,"currency":"eur"}`, op*7919, op)
}

var conflictBody = []byte(`{"detail":"a request with this Idempotency-Key is in progress","status":409,"title":"Conflict","type":"about:blank"}`)

func (s *synth) next() history.Attempt {
	if len(s.pending) > 0 {
		a := s.pending[0]
		s.pending = s.pending[1:]
		return a
	}
	s.t = s.t.Add(time.Millisecond)
	r := s.rng.Float64()
	if r < 0.15 && s.ops > 0 {
		op := s.ops - 1 - s.rng.IntN(min(s.ops, framework.LoadRetryWindow))
		return s.attempt(op, 201, synthBody(op), true)
	}
	op := s.ops
	s.ops++
	if r < 0.30 {
		s.pending = append(s.pending, s.attempt(op, 409, conflictBody, false))
	}
	return s.attempt(op, 201, synthBody(op), false)
}

func (s *synth) attempt(op, status int, body []byte, replay bool) history.Attempt {
	key := synthKey(op)
	reqBody := fmt.Appendf(nil, `{"ref": "rs-0123abcd-%07d", "amount": 1000, "currency": "eur"}`, op)
	resp := http.Header{
		"Content-Type":   {"application/json"},
		"Date":           {s.t.Format(http.TimeFormat)},
		"Content-Length": {strconv.Itoa(len(body))},
	}
	if replay {
		resp["Idempotent-Replayed"] = []string{"true"}
	}
	return history.Attempt{
		Op: "orders", Key: key, Tenant: "tenant-a", Instance: "127.0.0.1:8080", Method: http.MethodPost,
		URL: "http://127.0.0.1:8080/v1/orders",
		ReqHeader: http.Header{
			"Authorization": {"Bearer alice"}, "Content-Type": {"application/json"},
			"Idempotency-Key": {`"` + key + `"`}, "User-Agent": {"retrysafe"},
		},
		ReqBody: reqBody, Status: status, RespHeader: resp, RespBody: body, BodyHash: sha256.Sum256(body),
		Start: s.t, End: s.t.Add(time.Duration(500+s.rng.IntN(4000)) * time.Microsecond), Outcome: history.OK,
	}
}
