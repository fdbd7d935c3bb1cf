// Package framework is what every side's properties run on: the Harness and its options, the
// run environment (Env), a running spec (S), Spec, Property and the registry, the generators (the
// same-key bursts and their last-byte release, the load plan and its Vegeta attack), the fault kit
// (the nemesis, processes, proxies, the downstream sink, the storage proxy) and the consumer kit
// (signers, broker topologies and publishers), the drivers' plumbing (RunSpec, Run, RunT) and the
// report assembly. No property lives here: the side packages (suites/api, suites/consumer) register
// theirs with Register, and package suites imports every side once.
package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/faults"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
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
	// MaxRedeliveryWait bounds every consumer spec's wait for a redelivery, a drain or a
	// settle (the redelivery clock, see RedeliveryClock; default DefaultMaxRedeliveryWait): a
	// spec that needs longer is skipped with both durations.
	MaxRedeliveryWait time.Duration
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
	// ReproWhole says Repro reruns the run as it is, to which no --focus, --seed or --key is added
	// (a merge: the shard files hold the run).
	ReproWhole bool
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
	// MaxFields bounds the fields the mismatch property changes one by one per operation
	// (default 32).
	MaxFields int
	// Shard makes the run one shard of a sharded load (nil: not sharded): its sequence numbers
	// are strided (shard I takes n ≡ I mod N) and its load sends its share of the run's plan.
	Shard *Shard
}

// Shard is the place of a run among the shards of one sharded load.
type Shard struct {
	// I is the shard's index (0-based) among N shards.
	I, N int
	// Twins is the share of new operations that the next shard sends too, at the same instant
	// (a cross-shard duplicate).
	Twins float64
}

// NewRunID returns a new run id: 8 random hex digits.
func NewRunID() string { return fmt.Sprintf("%08x", uint32(rand.Uint64())) }

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
	if s.MaxRedeliveryWait <= 0 {
		s.MaxRedeliveryWait = DefaultMaxRedeliveryWait
	}
	if s.Seed == 0 {
		s.Seed = time.Now().UnixNano()
	}
	if s.RunID == "" {
		s.RunID = NewRunID()
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
	if s.MaxFields <= 0 {
		s.MaxFields = DefaultMaxFields
	}
}

// Env is what the properties run against: the target, the harness's client, the history of
// every attempt and fault, and the faults the target allows. A Harness makes one (Harness.Env).
type Env struct {
	Target   *targets.Target
	Client   *httpclient.Client
	History  *history.History
	Settings Settings
	// Faults are the faults the target allows: always a nemesis and the embedded Toxiproxy;
	// a sink, a cluster and a storage proxy when the target file declares them.
	Faults *Faults

	Observer *http.Client
	// Limits are the load limits in force, in words (the guard rails of a remote target, or its
	// load_limits).
	Limits string
	// InProcess drives the clients that declare no command (suites.RunClientT); nil otherwise.
	InProcess *InProcessClient

	procs     *faults.Processes
	procsOnce sync.Once
	ownProcs  bool
	seq       atomic.Int64
	seqStep   int64 // 1, or N in a shard of N
	rngMu     sync.Mutex
	rng       *rand.Rand

	race raceStats // arrival spreads of the race property's bursts

	chain *ChainParts // a chain target's running parts

	deviations []string     // how the API differs from the draft, found before the properties (keyforms.go)
	waits      *waitPrinter // the progress of long waits, on the run's log
	async      *asyncBook   // the asynchronous operations to follow (async.go); nil: none declared

	// done ends with Close: every attempt still running ends.
	done  context.Context
	close context.CancelFunc
}

// newEnv prepares a target for a run (the Harness owns it), its history redacted by r.
func newEnv(t *targets.Target, s Settings, r *history.Redactor) *Env {
	s.defaults()
	h := history.New(r)
	e := &Env{
		Target:   t,
		History:  h,
		Settings: s,
		rng:      rand.New(rand.NewPCG(uint64(s.Seed), 0x5eed)),
	}
	e.seqStep = 1
	if sh := s.Shard; sh != nil {
		e.seq.Store(int64(sh.I))
		e.seqStep = int64(sh.N)
	}
	e.done, e.close = context.WithCancel(context.Background())
	e.Client = httpclient.New(httpclient.Options{
		Timeout:             s.AttemptTimeout,
		TLS:                 t.TLSConfig(),
		MaxIdleConnsPerHost: max(s.RaceK, 2*s.LoadWorkers, 16),
		History:             h,
	})
	e.Observer = t.ObserverClient(s.AttemptTimeout, max(loadCountWorkers, settleWorkers))
	if e.async = newAsyncBook(e); e.async != nil {
		h.SetAnnotator(e.async.annotate)
	}
	return e
}

// Close ends every attempt still running and releases the connections of the run.
func (e *Env) Close() {
	e.close()
	if e.ownProcs {
		e.procs.StopAll(stopGrace)
	}
	e.Client.CloseIdle()
	e.Observer.CloseIdleConnections()
}

// intn returns a repeatable random number in [0, n).
func (e *Env) intn(n int) int {
	e.rngMu.Lock()
	defer e.rngMu.Unlock()
	return e.rng.IntN(n)
}

// Next returns the next sequence number of the run (in a shard, the next one ≡ I mod N).
func (e *Env) Next() int64 { return e.seq.Add(e.seqStep) }

// defaultTenant is the tenant most specs act as (nil when the target declares none).
func (e *Env) defaultTenant() *targets.Tenant {
	if len(e.Target.Tenants) == 0 {
		return nil
	}
	return e.Target.Tenants[0]
}

// Observed returns the operations that have an observer; properties that rest on counting
// use these.
func (e *Env) Observed() []*targets.Operation {
	var ops []*targets.Operation
	for _, op := range e.Target.Operations {
		if op.Observer != nil {
			ops = append(ops, op)
		}
	}
	return ops
}

// DefaultMaxFields bounds the fields the field-by-field mismatch spec changes per operation.
const DefaultMaxFields = 32
