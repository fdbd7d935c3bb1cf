// Package suites holds retrysafe's conformance properties: Ginkgo specs, one file per
// property, that run against any API described by a target file and judge it by counting
// the business records each operation left behind.
package suites

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
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
}

// Env is what the properties run against: the target, the harness's client and the
// history of every attempt.
type Env struct {
	Target   *targets.Target
	Client   *httpclient.Client
	History  *history.History
	Settings Settings

	observer *http.Client
	seq      atomic.Int64
	rngMu    sync.Mutex
	rng      *rand.Rand

	evMu    sync.Mutex
	current *Evidence // evidence of the spec that is running (specs run one at a time)
}

// NewEnv prepares a target for a run.
func NewEnv(t *targets.Target, s Settings) *Env {
	s.defaults()
	secrets := t.SecretValues()
	var secretHeaders []string
	for _, tn := range t.Tenants {
		for name := range tn.Headers {
			secretHeaders = append(secretHeaders, name)
		}
	}
	h := history.New(history.NewRedactor(secrets, secretHeaders))
	e := &Env{
		Target:   t,
		History:  h,
		Settings: s,
		rng:      rand.New(rand.NewPCG(uint64(s.Seed), 0x5eed)),
	}
	e.Client = httpclient.New(httpclient.Options{
		Timeout:             s.AttemptTimeout,
		TLS:                 t.TLSConfig(),
		MaxIdleConnsPerHost: max(s.RaceK, 16),
		History:             h,
	})
	e.observer = &http.Client{
		Timeout:       s.AttemptTimeout,
		Transport:     &http.Transport{TLSClientConfig: t.TLSConfig()},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return e
}

// Close releases the connections of the run.
func (e *Env) Close() {
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
	return context.WithTimeout(context.Background(), time.Duration(n)*e.Settings.AttemptTimeout)
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
