// Package reference is retrysafe's reference API: an orders API that implements
// idempotency keys as the IETF draft and Stripe describe, on four stores (memory, SQLite,
// PostgreSQL, Redis), with deliberately broken modes ("mutants") that the suites must catch.
package reference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// Defaults of the reference API.
const (
	DefaultRetention         = 24 * time.Hour
	DefaultLockTimeout       = 30 * time.Second
	DefaultDownstreamTimeout = 10 * time.Second
	// DefaultWorkDelay is the simulated processing time of `retrysafe serve` between claiming
	// a key and writing the record: a real handler spends it calling a provider or a
	// database. It gives the check-then-insert bug of the race mutant the window it has in
	// real services; the correct API is unaffected (retries in the window get 409).
	DefaultWorkDelay = 3 * time.Millisecond
	maxBodyBytes     = 1 << 20
)

// ArrivalHeader is a test-only header: when a POST carries it, the answer carries it too,
// holding the server's Unix time in nanoseconds at which the request body had been read
// (not when the handler started: Go starts handlers before the last body byte arrives).
// The race engine uses it to measure a burst's arrival spread.
const ArrivalHeader = "X-Retrysafe-Arrival"

// Config configures an API. The zero value of every shape option (KeyFormat, Auth, Hooks,
// MismatchStatus) is the API as it has always been.
type Config struct {
	Store             Store
	Tenants           []string // tenant names: the bearer token, or the TenantHeader value with AuthNone
	Mutant            Mutant
	Retention         time.Duration // declared retention (mutants may change the effective one)
	LockTimeout       time.Duration // declared lock timeout
	Downstream        string        // URL of the downstream provider; "" = no downstream call
	DownstreamTimeout time.Duration
	WorkDelay         time.Duration // simulated processing time between claim and write
	Now               func() time.Time
	Logger            *log.Logger
	// KeyFormat restricts the keys accepted: "" or KeyFormatAny (any key), KeyFormatUUID.
	KeyFormat KeyFormat
	// Auth says how the tenant is known: "" or AuthBearer, AuthNone (the TenantHeader).
	Auth AuthMode
	// Hooks turns on the black-box test hooks: POST FailPath, the DelayHeader and
	// HoldPublishPath.
	Hooks bool
	// MismatchStatus answers a reused key with another payload: a 4xx; 0 = 422.
	MismatchStatus int
	// Events makes every new order publish an order.created event through the store's outbox
	// (RelayLoop publishes it); nil = no events.
	Events *EventsConfig

	// Async makes every POST an asynchronous operation (async.go): 202 with the operation's
	// reference, the record written later by the worker (WorkerLoop). The store must keep jobs
	// (Jobs).
	Async bool
	// AsyncDelay is how long after its 202 an operation's job runs at the earliest.
	AsyncDelay time.Duration
}

// API is the reference API's HTTP handler.
type API struct {
	cfg     Config
	tenants map[string]bool
	mux     *http.ServeMux
	hc      *http.Client
	hooks   hooks
	relay   *relay  // nil without events
	worker  *worker // nil unless Config.Async
}

// operation is one of the two idempotent operations.
type operation struct {
	kind   string // "orders" or "refunds"
	object string // "order" or "refund"
	prefix string // id prefix
}

var operations = map[string]operation{
	"/v1/orders":  {"orders", "order", "ord_"},
	"/v1/refunds": {"refunds", "refund", "rfd_"},
}

// NewAPI returns the handler for a configuration.
func NewAPI(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("reference: no store")
	}
	if len(cfg.Tenants) == 0 {
		return nil, errors.New("reference: no tenants")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	if cfg.DownstreamTimeout <= 0 {
		cfg.DownstreamTimeout = DefaultDownstreamTimeout
	}
	if err := cfg.checkShape(); err != nil {
		return nil, err
	}
	if cfg.Mutant.needsEvents() && cfg.Events == nil {
		return nil, fmt.Errorf("reference: mutant %s changes how events are published: give the API events to publish (serve --events)", cfg.Mutant)
	}
	a := &API{cfg: cfg, tenants: map[string]bool{}, mux: http.NewServeMux()}
	if cfg.Events != nil {
		if cfg.Events.Publisher == nil {
			return nil, errors.New("reference: events without a publisher")
		}
		a.relay = newRelay(cfg.Store, *cfg.Events, cfg.Now, cfg.Logger)
		a.relay.mutant = cfg.Mutant
		if cfg.Hooks {
			a.relay.hold = &a.hooks.publish
		}
	}
	for _, t := range cfg.Tenants {
		a.tenants[t] = true
	}
	a.hc = &http.Client{Timeout: cfg.DownstreamTimeout}
	for path, op := range operations {
		a.mux.HandleFunc("POST "+path, a.create(op))
		a.mux.HandleFunc("GET "+path, a.list(op))
	}
	if err := a.setUpAsync(); err != nil {
		return nil, err
	}
	if cfg.Hooks {
		a.mux.HandleFunc("POST "+FailPath, a.failNext)
		for _, m := range []string{"POST ", "GET ", "DELETE "} {
			a.mux.HandleFunc(m+HoldPublishPath, a.holdPublish)
		}
	}
	a.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	})
	return a, nil
}

// checkShape checks the shape options and fills in their defaults.
func (cfg *Config) checkShape() error {
	var err error
	if cfg.KeyFormat, err = ParseKeyFormat(string(cfg.KeyFormat)); err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	if cfg.Auth, err = ParseAuthMode(string(cfg.Auth)); err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	if cfg.MismatchStatus == 0 {
		cfg.MismatchStatus = http.StatusUnprocessableEntity
	}
	if err := CheckMismatchStatus(cfg.MismatchStatus); err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	return nil
}

// CheckMismatchStatus accepts the statuses a mismatch may be answered with: 400 to 499.
func CheckMismatchStatus(status int) error {
	if status < 400 || status > 499 {
		return fmt.Errorf("mismatch status %d is not a client error (400 to 499)", status)
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// retention is the effective retention: what the mutants make of the declared one.
func (a *API) retention() time.Duration {
	switch a.cfg.Mutant {
	case MutantShortRetention:
		return a.cfg.Retention / 10
	case MutantNoExpiry:
		return 0
	case MutantForgetsEarly:
		if a.cfg.Retention > 0 && a.cfg.Retention < forgetsEarlyRetention {
			return a.cfg.Retention // forgetting early never means keeping longer
		}
		return forgetsEarlyRetention
	}
	return a.cfg.Retention
}

// lockTimeout is the effective lock timeout.
func (a *API) lockTimeout() time.Duration {
	switch a.cfg.Mutant {
	case MutantEarlyTakeover:
		return a.cfg.LockTimeout / 10
	case MutantStuckLock:
		return 0
	}
	return a.cfg.LockTimeout
}

// orderRequest is the JSON body of both operations.
type orderRequest struct {
	Ref      string `json:"ref"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// orderBody is the JSON of a stored record, as returned by POST and listed by GET.
type orderBody struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Ref      string `json:"ref"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// parseOrder validates a request body.
func parseOrder(body []byte) (orderRequest, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return orderRequest{}, fmt.Errorf("body is not a JSON object: %v", err)
	}
	var o orderRequest
	for _, f := range []struct {
		name string
		dst  any
	}{{"ref", &o.Ref}, {"amount", &o.Amount}, {"currency", &o.Currency}} {
		v, ok := raw[f.name]
		if !ok {
			return o, fmt.Errorf("missing field %q", f.name)
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return o, fmt.Errorf("field %q: %v", f.name, err)
		}
	}
	if o.Ref == "" || o.Currency == "" {
		return o, errors.New(`fields "ref" and "currency" must not be empty`)
	}
	return o, nil
}

// list answers GET /v1/orders?ref=X: the observer that counts business records.
func (a *API) list(op operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tenant, fail := a.authenticate(r)
		if fail != nil {
			writeProblem(w, fail.status, fail.detail)
			return
		}
		ref := r.URL.Query().Get("ref")
		if ref == "" {
			writeProblem(w, http.StatusBadRequest, "query parameter ref is required")
			return
		}
		recs, err := a.cfg.Store.Records(r.Context(), tenant, op.kind, ref)
		if err != nil {
			a.cfg.Logger.Printf("list %s: %v", op.kind, err)
			writeProblem(w, http.StatusInternalServerError, "store error")
			return
		}
		items := make([]orderBody, len(recs))
		for i, rec := range recs {
			items[i] = orderBody{rec.ID, op.object, rec.Ref, rec.Amount, rec.Currency}
		}
		writeJSON(w, http.StatusOK, map[string]any{"count": len(items), "items": items})
	}
}

// writeJSON writes a JSON value.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// problemBody renders an RFC 9457 problem document.
func problemBody(status int, detail string) []byte {
	body, _ := json.Marshal(map[string]any{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail,
	})
	return body
}

// writeProblem writes an RFC 9457 problem response.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(problemBody(status, detail))
}

// writeStored writes a stored response, marking it as a replay when it is one.
func writeStored(w http.ResponseWriter, resp Response, replayed bool) {
	if resp.Status >= 400 {
		w.Header().Set("Content-Type", "application/problem+json")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	setOperationLocation(w, resp)
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
}

// RelayLoop publishes the outbox's events until ctx ends (relay.go); it returns at once for an
// API without events.
func (a *API) RelayLoop(ctx context.Context) {
	if a.relay != nil {
		a.relay.run(ctx)
	}
}

// PruneLoop deletes expired keys until ctx ends (storekit.PruneLoop: every quarter of the
// retention). It does nothing when keys never expire.
func (a *API) PruneLoop(ctx context.Context) {
	retention := a.retention()
	storekit.PruneLoop(ctx, retention, func(ctx context.Context) (int, error) {
		// Keep a margin of one retention: Claim already treats expired keys as new.
		return a.cfg.Store.Prune(ctx, a.cfg.Now().Add(-2*retention))
	}, a.cfg.Logger)
}
