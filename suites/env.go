// Package suites holds retrysafe's conformance properties: Ginkgo specs, one file per
// property, that run against any API described by a target file and judge it by counting
// the business records each operation left behind.
package suites

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/suites/history"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// Settings are the knobs of a run. Zero values take the defaults.
type Settings struct {
	// ReplayN is how many times the replay property sends one request (default 10).
	ReplayN int
	// RaceK is the size of a same-key burst (default 16).
	RaceK int
	// RaceRounds is how many bursts the race property fires per operation (default 20).
	RaceRounds int
	// MaxWait is the longest a property may wait for a key to expire (default 30s).
	MaxWait time.Duration
	// Seed makes the run's random choices repeatable.
	Seed int64
	// RunID names the run; it prefixes every {{.Ref}} so records of one run can be found.
	RunID string
	// KeyPrefix is the prefix of every idempotency key (default "rs-" + RunID).
	KeyPrefix string
	// AttemptTimeout bounds one request (default 10s).
	AttemptTimeout time.Duration
	// Repro is the command line that reruns this run, without --focus, --key and --seed.
	Repro string
	// RaceMode is how same-key bursts are released: RaceModeLastByte (the default; http://
	// targets only, others fall back to the barrier) or RaceModeBarrier.
	RaceMode string
	// LoadRate is the load property's rate in Vegeta hits per second (default 200); a
	// concurrent duplicate adds its twin to the hit.
	LoadRate int
	// LoadDuration is how long the load property attacks (default 3s).
	LoadDuration time.Duration
	// LoadRetryFraction is the share of hits that repeat an operation (default 0.3): half
	// sequential retries of an earlier operation, half concurrent duplicates (a new
	// operation fired twice at once). Negative: none.
	LoadRetryFraction float64
	// LoadWorkers bounds the load property's concurrent hits (default 32).
	LoadWorkers int
}

func (s *Settings) defaults() {
	if s.ReplayN <= 0 {
		s.ReplayN = 10
	}
	if s.RaceK <= 0 {
		s.RaceK = 16
	}
	if s.RaceRounds <= 0 {
		s.RaceRounds = 20
	}
	if s.MaxWait <= 0 {
		s.MaxWait = 30 * time.Second
	}
	if s.Seed == 0 {
		s.Seed = time.Now().UnixNano()
	}
	if s.RunID == "" {
		s.RunID = fmt.Sprintf("%08x", uint32(rand.Uint64()))
	}
	if s.KeyPrefix == "" {
		s.KeyPrefix = "rs-" + s.RunID
	}
	if s.AttemptTimeout <= 0 {
		s.AttemptTimeout = 10 * time.Second
	}
	if s.LoadRate <= 0 {
		s.LoadRate = DefaultLoadRate
	}
	if s.LoadDuration <= 0 {
		s.LoadDuration = DefaultLoadDuration
	}
	switch {
	case s.LoadRetryFraction == 0:
		s.LoadRetryFraction = DefaultLoadRetryFraction
	case s.LoadRetryFraction < 0:
		s.LoadRetryFraction = 0
	case s.LoadRetryFraction > 1:
		s.LoadRetryFraction = 1
	}
	if s.LoadWorkers <= 0 {
		s.LoadWorkers = DefaultLoadWorkers
	}
}

// Env is what the properties run against: the target, the harness's client and the
// history of every attempt.
type Env struct {
	Target   *targets.Target
	Client   *httpclient.Client
	History  *history.History
	Settings Settings
	// Faults are the faults the target allows (nil: none; the fault properties skip).
	Faults *Faults

	observer *http.Client
	seq      atomic.Int64
	rngMu    sync.Mutex
	rng      *rand.Rand

	evMu    sync.Mutex
	current *Evidence // evidence of the spec that is running (specs run one at a time)

	race      raceStats // arrival spreads of the race property's bursts
	reportDir string    // where properties write files (RunOptions.ReportDir); "" = nowhere

	// done is cancelled by Close: every attempt still running ends, and a spec body that
	// Ginkgo abandoned (after an interrupt or the run's deadline) stops at its next step.
	done  context.Context
	close context.CancelFunc
}

// NewEnv prepares a target for a run.
func NewEnv(t *targets.Target, s Settings) *Env {
	s.defaults()
	h := history.New(history.NewRedactor(t.SecretValues(), t.SecretHeaders()))
	e := &Env{
		Target:   t,
		History:  h,
		Settings: s,
		rng:      rand.New(rand.NewPCG(uint64(s.Seed), 0x5eed)),
	}
	e.done, e.close = context.WithCancel(context.Background())
	e.Client = httpclient.New(httpclient.Options{
		Timeout:             s.AttemptTimeout,
		TLS:                 t.TLSConfig(),
		MaxIdleConnsPerHost: max(s.RaceK, 2*s.LoadWorkers, 16),
		History:             h,
	})
	e.observer = t.ObserverClient(s.AttemptTimeout, loadCountWorkers)
	return e
}

// Close ends every attempt still running and releases the connections of the run.
func (e *Env) Close() {
	e.close()
	e.Client.CloseIdle()
	e.observer.CloseIdleConnections()
}

// intn returns a repeatable random number in [0, n).
func (e *Env) intn(n int) int {
	e.rngMu.Lock()
	defer e.rngMu.Unlock()
	return e.rng.IntN(n)
}

// next returns the next sequence number of the run.
func (e *Env) next() int64 { return e.seq.Add(1) }

// ctx returns a context bounded by the attempt timeout times n.
func (e *Env) ctx(n int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(e.done, time.Duration(n)*e.Settings.AttemptTimeout)
}

// halt ends the calling goroutine, quietly, once the environment is closed. Ginkgo does not
// stop a spec body when the run is interrupted or passes its deadline: it abandons it and
// moves on. Such a body must neither keep sending nor report into a later run (Ginkgo's
// Fail, Skip and Expect act on package globals), so it calls halt before each step.
func (e *Env) halt() {
	if e.done.Err() != nil {
		runtime.Goexit()
	}
}

// sleepUntil waits until t, or halts when the environment is closed first.
func (e *Env) sleepUntil(t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-e.done.Done():
		e.halt()
	}
}

// defaultTenant is the tenant most specs act as (nil when the target declares none).
func (e *Env) defaultTenant() *targets.Tenant {
	if len(e.Target.Tenants) == 0 {
		return nil
	}
	return e.Target.Tenants[0]
}

// observed returns the operations that have an observer; properties that rest on counting
// use these.
func (e *Env) observed() []*targets.Operation {
	var ops []*targets.Operation
	for _, op := range e.Target.Operations {
		if op.Observer != nil {
			ops = append(ops, op)
		}
	}
	return ops
}
