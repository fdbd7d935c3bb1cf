// Package consumer is retrysafe's reference webhook consumer: an endpoint that receives
// at-least-once, unordered deliveries of events, verifies their signatures
// (targets/webhook), deduplicates them on the event id with an atomic, leased claim, applies
// each event's effect (one effect row, a call to the harness's downstream sink, the
// object's state moved forward only) in one transaction, on four stores (memory, SQLite,
// PostgreSQL, Redis). Its deliberately broken modes ("mutants", see Mutants) are what the
// consumer properties of the suites must catch.
//
// Deliver is the transport-independent entry point: the HTTP handler calls it after
// verifying the signature, and queue transports (AMQP, NATS) call it for each message.
package consumer

import (
	"errors"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/targets/webhook"
)

// Defaults of the reference consumer.
const (
	// DefaultTolerance bounds a signed timestamp's distance from now.
	DefaultTolerance = webhook.DefaultTolerance
	// DefaultDedupeRetention is how long an event's dedupe record lives: longer than the
	// 3 days over which Stripe retries.
	DefaultDedupeRetention = 72 * time.Hour
	// DefaultLockTimeout is how long a claim holds an event before another delivery may
	// take it over (a crash after the claim does not lose the event).
	DefaultLockTimeout       = 30 * time.Second
	DefaultDownstreamTimeout = 10 * time.Second
	// DefaultWorkDelay is the simulated processing time between the claim and the effect:
	// it gives a check-then-insert consumer the window it has in real services.
	DefaultWorkDelay = 3 * time.Millisecond
	// DownstreamPath is the downstream sink's path the consumer POSTs each effect to.
	DownstreamPath = "/v1/effects"
	// forgetfulRetention is the dedupe-forgets-early mutant's effective retention.
	forgetfulRetention = time.Second
	maxBodyBytes       = 1 << 20
)

// Config configures a Consumer. Zero durations take their defaults.
type Config struct {
	Store Store
	// Signing says how deliveries are signed; the none scheme (or the zero value) accepts
	// unsigned deliveries.
	Signing webhook.Config
	// Tolerance bounds the signed timestamp's age; it overrides Signing.Tolerance when
	// positive (otherwise Signing.Tolerance, or DefaultTolerance when that is zero).
	Tolerance time.Duration
	// DedupeRetention is how long an event stays a duplicate; older records are treated
	// as new and pruned (negative: never forgotten).
	DedupeRetention time.Duration
	// LockTimeout is the claim's lease (negative: never taken over).
	LockTimeout time.Duration
	// Downstream is the base URL of the harness's sink; "" = no downstream call.
	Downstream        string
	DownstreamTimeout time.Duration
	// WorkDelay is the simulated processing time between claim and effect (negative: none).
	WorkDelay time.Duration
	// EffectDelay is added to every handling's processing time: the slow hook as a worker's
	// environment (EnvEffectDelay, read by `serve --hooks`).
	EffectDelay time.Duration
	Mutant      Mutant
	// Hooks offers the test hooks: POST /_test/fail?event=ID&when=POINT makes the next handling
	// of that event (of any, without event=) fail at the point, DELETE /_test/fail disarms,
	// FailHeader fails a delivery that is not a redelivery, and DelayHeader (a webhook header, or
	// a queue message's) slows one handling.
	Hooks bool
	// IDFrom says where a delivery carries the event id. The zero value: the body of a webhook
	// delivery, the transport's message id of a queue message.
	IDFrom IDFrom
	// OperationHeader names the header (of a webhook request, or of a queue message) that names
	// the business operation an event applies; "" = the body's data.operation (or its
	// data.operations list, which a header never overrides).
	OperationHeader string
	Now             func() time.Time
	Logger          *log.Logger
}

// Consumer is the reference webhook consumer. It implements http.Handler, and Deliver for
// other transports. It is safe for concurrent use.
type Consumer struct {
	cfg    Config
	signer *webhook.Signer
	hc     *http.Client
	mux    *http.ServeMux
	hooks  testHooks
	seen   seenSet // the in-memory-dedupe mutant's
}

var _ http.Handler = (*Consumer)(nil)

// New returns the consumer of a configuration.
func New(cfg Config) (*Consumer, error) {
	if cfg.Store == nil {
		return nil, errors.New("consumer: no store")
	}
	mutant, err := ParseMutant(string(cfg.Mutant))
	if err != nil {
		return nil, err
	}
	cfg.Mutant = mutant
	cfg = withDefaults(cfg)
	signing := cfg.Signing
	signing.Tolerance = cfg.Tolerance
	signer, err := webhook.New(signing)
	if err != nil {
		return nil, err
	}
	c := &Consumer{cfg: cfg, signer: signer, hc: &http.Client{Timeout: cfg.DownstreamTimeout}, hooks: testHooks{on: cfg.Hooks}}
	c.mux = c.routes()
	return c, nil
}

// withDefaults fills in the zero fields.
func withDefaults(cfg Config) Config {
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = orDefault(cfg.Signing.Tolerance, DefaultTolerance)
	}
	cfg.DedupeRetention = orDefault(cfg.DedupeRetention, DefaultDedupeRetention)
	cfg.LockTimeout = orDefault(cfg.LockTimeout, DefaultLockTimeout)
	cfg.DownstreamTimeout = orDefault(cfg.DownstreamTimeout, DefaultDownstreamTimeout)
	cfg.WorkDelay = orDefault(cfg.WorkDelay, DefaultWorkDelay)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	return cfg
}

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// ServeHTTP implements http.Handler.
func (c *Consumer) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.mux.ServeHTTP(w, r) }

// Signer returns the signer the consumer verifies deliveries with.
func (c *Consumer) Signer() *webhook.Signer { return c.signer }

// retention is the effective dedupe retention (<= 0: never forgotten).
func (c *Consumer) retention() time.Duration {
	if c.cfg.Mutant == MutantDedupeForgetsEarly {
		return forgetfulRetention
	}
	return c.cfg.DedupeRetention
}

// claimRequest is the claim of a dedupe key now.
func (c *Consumer) claimRequest(key string) ClaimRequest {
	return ClaimRequest{Key: key, Now: c.cfg.Now(), Retention: c.retention(), LockTimeout: c.cfg.LockTimeout}
}
