// Package probe infers the idempotency behaviour of a target from a small, bounded set of
// non-destructive requests, and notices when that behaviour changes.
//
// Run sends each request once through the harness's HTTP client and records it; every inferred
// field of the resulting Profile carries the attempts it came from and the business records
// counted through the operation's observer. A field the probe cannot establish reliably (the
// answer while in flight when nothing lets the harness hold a request, expiry) is NotProbed,
// never guessed. check.Compare lists the fields that differ between two profiles.
package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/retrysafe/retrysafe/reports/profile"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// Defaults of Options.
const (
	DefaultAttemptTimeout = 10 * time.Second
	DefaultMaxAttempts    = 150
	DefaultKeySearchLimit = 4096
	DefaultHoldWindow     = time.Second
)

// ErrUnreachable means no request reached the target.
var ErrUnreachable = errors.New("target unreachable")

// ErrBaseline means the target did not accept the first, ordinary request, so no behaviour can
// be inferred from the others.
var ErrBaseline = errors.New("the baseline request did not succeed")

// Options bound and shape a probe. The zero value takes the defaults.
type Options struct {
	// AttemptTimeout bounds one request (default DefaultAttemptTimeout).
	AttemptTimeout time.Duration
	// MaxAttempts bounds the number of requests (default DefaultMaxAttempts); fields not reached
	// within it are NotProbed.
	MaxAttempts int
	// KeySearchLimit is the longest key the key-length search tries (default 4096).
	KeySearchLimit int
	// HoldWindow is how long a retry sent while the first attempt is held may stay unanswered
	// before the target is judged to wait (default 1s).
	HoldWindow time.Duration
	// MinInterval is the least time between two requests (the rate limit for remote targets).
	MinInterval time.Duration
	// RunID prefixes keys and refs (default: random).
	RunID string
	// Tool names the program in the profile.
	Tool string
}

func (o *Options) defaults() {
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.KeySearchLimit <= 0 {
		o.KeySearchLimit = DefaultKeySearchLimit
	}
	if o.HoldWindow <= 0 {
		o.HoldWindow = DefaultHoldWindow
	}
	if o.RunID == "" {
		o.RunID = fmt.Sprintf("%08x", rand.Uint32())
	}
}

// prober holds the state of one probe.
type prober struct {
	t        *targets.Target
	opts     Options
	client   *httpclient.Client
	hist     *history.History
	observer *http.Client
	def      *targets.Operation // the operation most fields are probed on
	tenant   *targets.Tenant    // the default tenant (nil = none declared)
	sink     *faults.Sink       // the downstream sink; nil when the target declares none
	seq      int

	mu   sync.Mutex
	last time.Time // the slot of the latest request (pace)
}

// Run probes the target and returns its behaviour profile. It returns ErrUnreachable (wrapped)
// when the first request could not reach the target and ErrBaseline when the target refused it;
// otherwise a profile, in which fields that could not be established are NotProbed.
func Run(ctx context.Context, t *targets.Target, opts Options) (*profile.Profile, error) {
	opts.defaults()
	p := newProber(t, opts)
	defer p.client.CloseIdle()
	defer p.observer.CloseIdleConnections()
	prof := &profile.Profile{Schema: profile.SchemaVersion, Tool: opts.Tool, RunID: opts.RunID, Started: time.Now(),
		Target: profile.TargetInfo{Name: t.Name, File: t.Path}}
	for _, in := range t.Instances {
		prof.Target.Instances = append(prof.Target.Instances, p.hist.Redactor().URL(in.URL.String()))
	}
	noSink := p.openSink()
	if p.sink != nil {
		defer p.sink.Close()
	}
	base := p.newOp(p.def, p.tenant)
	first, ok := p.send(ctx, base, sendOpts{})
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: the attempt budget is 0", ErrUnreachable)
	case first.Outcome == history.Failed:
		return nil, fmt.Errorf("%w: %s: %s", ErrUnreachable, first.URL, first.Err)
	case first.Outcome == history.Unknown:
		return nil, fmt.Errorf("%w: %s %s got no answer: %s", ErrUnreachable, first.Method, first.URL, first.Err)
	case !success(first):
		return nil, fmt.Errorf("%w: %s %s answered %d: %s", ErrBaseline, first.Method, first.URL, first.Status, snippet(first.RespBody))
	}
	prof.Fields = append(prof.Fields, p.replayFields(ctx, base, first)...)
	prof.Fields = append(prof.Fields, p.mismatchFields(ctx)...)
	prof.Fields = append(prof.Fields, p.downstreamFields(ctx, noSink)...)
	prof.Fields = append(prof.Fields, p.keyFields(ctx)...)
	prof.Fields = append(prof.Fields, p.scopeFields(ctx)...)
	prof.Fields = append(prof.Fields, profile.Field{Name: profile.FieldExpired, Value: profile.NotProbed,
		Note: "waiting out the key retention is beyond a probe; run `retrysafe run --label-filter property:expiry`"})
	prof.Fields = ordered(prof.Fields)
	prof.Attempts = p.hist.Len()
	prof.Finished = time.Now()
	return prof, nil
}

// newProber prepares the client, the history and the operation to probe.
func newProber(t *targets.Target, opts Options) *prober {
	hist := history.New(history.NewRedactor(t.SecretValues(), t.SecretHeaders()))
	p := &prober{t: t, opts: opts, hist: hist, def: t.Operations[0]}
	p.client = httpclient.New(httpclient.Options{Timeout: opts.AttemptTimeout, TLS: t.TLSConfig(), History: hist})
	p.observer = t.ObserverClient(opts.AttemptTimeout, 0)
	for _, op := range t.Operations {
		if op.Observer != nil {
			p.def = op
			break
		}
	}
	if len(t.Tenants) > 0 {
		p.tenant = t.Tenants[0]
	}
	return p
}

// ordered sorts fields into FieldOrder.
func ordered(fields []profile.Field) []profile.Field {
	out := make([]profile.Field, 0, len(fields))
	for _, name := range profile.FieldOrder {
		for _, f := range fields {
			if f.Name == name {
				out = append(out, f)
			}
		}
	}
	return out
}

// op is one logical operation: a declared operation with a key, a ref and a tenant.
type op struct {
	def    *targets.Operation
	key    string
	ref    string
	tenant *targets.Tenant
}

// newOp returns a fresh operation with its own key and ref.
func (p *prober) newOp(def *targets.Operation, tn *targets.Tenant) op {
	p.seq++
	id := fmt.Sprintf("rs-probe-%s-%03d", p.opts.RunID, p.seq)
	return op{def: def, key: id, ref: id, tenant: tn}
}

// sendOpts vary one attempt.
type sendOpts struct {
	variant bool
	key     targets.KeyMode
	body    []byte // sent instead of the rendered body
	noAuth  bool   // send without the tenant's credentials (the body still names the tenant)
}

// vars are the template values of an operation.
func (o op) vars() targets.Vars {
	v := targets.Vars{Ref: o.ref, Key: o.key}
	if o.tenant != nil {
		v.Tenant = o.tenant.Name
	}
	return v
}

// send sends one attempt to the first instance. ok is false when the attempt budget is spent
// (nothing was sent).
func (p *prober) send(ctx context.Context, o op, s sendOpts) (history.Attempt, bool) {
	if p.hist.Len() >= p.opts.MaxAttempts {
		return history.Attempt{}, false
	}
	p.pace(ctx)
	in := targets.BuildInput{Instance: &p.t.Instances[0], Tenant: o.tenant, Vars: o.vars(), Variant: s.variant,
		Key: s.key, Body: s.body, Context: ctx}
	if s.noAuth {
		in.Tenant = nil
	}
	meta := httpclient.Meta{Op: o.def.Name, Key: o.key, Instance: p.t.Instances[0].URL.String()}
	if in.Tenant != nil {
		meta.Tenant = in.Tenant.Name
	}
	if s.key.Omit {
		meta.Key = ""
	}
	req, _, err := o.def.Build(in)
	if err != nil {
		now := time.Now()
		return p.hist.Add(history.Attempt{Op: o.def.Name, Key: meta.Key, Tenant: meta.Tenant, Start: now, End: now,
			Outcome: history.Failed, Err: err.Error(), Note: "the request could not be built"}), true
	}
	return p.client.Do(ctx, req, meta), true
}

// pace waits until Options.MinInterval has passed since the previous request's slot. Safe for
// concurrent use: each caller reserves its own slot.
func (p *prober) pace(ctx context.Context) {
	if p.opts.MinInterval <= 0 {
		return
	}
	p.mu.Lock()
	slot := time.Now()
	if next := p.last.Add(p.opts.MinInterval); next.After(slot) {
		slot = next
	}
	p.last = slot
	p.mu.Unlock()
	select {
	case <-time.After(time.Until(slot)):
	case <-ctx.Done():
	}
}

// body renders the body an attempt of o would carry.
func (p *prober) body(o op) ([]byte, error) {
	_, body, err := o.def.Build(targets.BuildInput{Instance: &p.t.Instances[0], Tenant: o.tenant, Vars: o.vars()})
	return body, err
}

// records counts the business records of o through its observer; ok is false when the
// operation has none or the observer failed (the error is in note).
func (p *prober) records(ctx context.Context, o op) (c profile.Count, ok bool, note string) {
	if o.def.Observer == nil {
		return profile.Count{}, false, ""
	}
	c = profile.Count{Op: o.def.Name, Ref: o.ref}
	if o.tenant != nil {
		c.Tenant = o.tenant.Name
	}
	n, err := p.t.CountRecords(ctx, o.def, o.tenant, o.vars(), p.observer)
	if err != nil {
		return c, false, "observer: " + err.Error()
	}
	c.Records = n
	return c, true, ""
}

// success reports whether an attempt got a 2xx answer.
func success(a history.Attempt) bool {
	return a.Outcome == history.OK && a.Status >= 200 && a.Status < 300
}
