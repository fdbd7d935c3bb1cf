package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// Op is one logical operation of a spec: a declared operation with a fresh idempotency key
// and a fresh {{.Ref}}, sent as one tenant. Every attempt of the Op carries the same key.
type Op struct {
	s      *S
	Def    *targets.Operation
	Key    string
	Ref    string
	Tenant *targets.Tenant
}

// NewOp starts a fresh operation of def as the default tenant.
func (s *S) NewOp(def *targets.Operation) *Op {
	n := s.Next()
	op := &Op{
		s:      s,
		Def:    def,
		Key:    s.KeyFor(def, n),
		Ref:    s.Ref(n),
		Tenant: s.defaultTenant(),
	}
	s.NoteKey(op.Key)
	return op
}

// Ref returns the run's n-th {{.Ref}}.
func (e *Env) Ref(n int64) string { return fmt.Sprintf("%s%04d", e.RefPrefix(), n) }

// RefPrefix is what every {{.Ref}} of the run starts with.
func (e *Env) RefPrefix() string { return "rs-" + e.Settings.RunID + "-" }

// KeyFor returns the run's n-th idempotency key in the format of def's keys (key.format).
func (e *Env) KeyFor(def *targets.Operation, n int64) string {
	return def.Key.Format.Make(e.Settings.KeyPrefix, n)
}

// Again returns an operation with the same key, ref and tenant on another declared
// operation (for the scope checks).
func (o *Op) Again(def *targets.Operation) *Op {
	c := *o
	c.Def = def
	return &c
}

// As returns the same operation (same key and ref) sent as another tenant.
func (o *Op) As(t *targets.Tenant) *Op {
	c := *o
	c.Tenant = t
	return &c
}

// WithKey returns the same operation (same ref, body) under another key.
func (o *Op) WithKey(key string) *Op {
	c := *o
	c.Key = key
	o.s.NoteKey(key)
	return &c
}

// Send options.
type Send struct {
	// Instance picks the instance (index modulo the number of instances); -1 = random.
	Instance int
	// Via sends to this instance instead (e.g. the instance seen through a fault proxy).
	Via *targets.Instance
	// Variant sends the operation's variant body (the mismatch check).
	Variant bool
	// Reformat sends the body with its fields reordered and other white space.
	Reformat bool
	// Body sends this body instead of the rendered one (a field-by-field variant).
	Body []byte
	// Key says how the key is sent (omitted, a form, a raw value).
	Key targets.KeyMode
	// Auth: "" = the op's tenant, "none" = no credentials, "unknown" = wrong credentials.
	Auth string
	// SlowMs makes the attempt take this many milliseconds through the target's slow hook.
	SlowMs int64
}

func (o *Op) Vars() targets.Vars {
	tenant := ""
	if o.Tenant != nil {
		tenant = o.Tenant.Name
	}
	return targets.Vars{Ref: o.Ref, Key: o.Key, Tenant: tenant}
}

// Do sends one attempt, bounded by the attempt timeout, and returns it as recorded.
func (o *Op) Do(s Send) history.Attempt {
	ctx, cancel := o.s.AttemptCtx(1)
	defer cancel()
	return o.DoCtx(ctx, s)
}

// DoCtx is Do with a context.
func (o *Op) DoCtx(ctx context.Context, s Send) history.Attempt {
	req, meta, err := o.Build(ctx, s)
	if err != nil {
		now := time.Now()
		return o.s.History.Add(history.Attempt{Op: o.Def.Name, Key: o.Key, Start: now, End: now,
			Outcome: history.Failed, Err: "build request: " + err.Error()})
	}
	return o.s.Client.Do(ctx, req, meta)
}

// Build renders the attempt's request without sending it.
func (o *Op) Build(ctx context.Context, s Send) (*http.Request, httpclient.Meta, error) {
	ins := o.s.Instance(s.Instance)
	if s.Via != nil {
		ins = s.Via
	}
	tenant := o.Tenant
	if s.Auth != "" {
		tenant = o.badTenant(s.Auth)
	}
	req, body, err := o.Def.Build(targets.BuildInput{
		Context: ctx, Instance: ins, Tenant: tenant, Vars: o.Vars(), Variant: s.Variant, Key: s.Key, Body: s.Body,
		SlowMs: s.SlowMs, Slow: o.slowHook(),
	})
	if err != nil {
		return nil, httpclient.Meta{}, err
	}
	if s.Reformat {
		if body, err = targets.Reformat(body, o.Def.BodyFormat); err != nil {
			return nil, httpclient.Meta{}, err
		}
		SetBody(req, body)
	}
	name := ""
	if tenant != nil {
		name = tenant.Name
	}
	if s.Auth != "" {
		name = "(" + s.Auth + " credentials)"
	}
	return req, httpclient.Meta{Op: o.Def.Name, Key: o.Key, Tenant: name, Instance: ins.URL.Host}, nil
}

// badTenant returns the tenant to send as for Auth "none" (its identity headers alone) or
// "unknown" (wrong credentials).
func (o *Op) badTenant(auth string) *targets.Tenant {
	switch {
	case o.Tenant == nil:
		return nil
	case auth == "unknown":
		return o.s.Target.UnknownCaller(o.Tenant)
	}
	return o.Tenant.WithoutCredentials()
}

// Count counts the business records of this operation's ref for its tenant and notes the
// count in the spec's evidence. An operation without an observer gives a count not taken.
func (o *Op) Count() check.Count {
	c := o.CountQuiet()
	if !c.Taken {
		return c
	}
	name := fmt.Sprintf("records(%s, tenant %s, ref %s)", o.Def.Name, c.Tenant, o.Ref)
	if c.Err != "" {
		o.s.Notef("%s: %s", name, c.Err)
	} else {
		o.s.NoteCount(name, c.N)
	}
	return c
}

// CountQuiet is Count without a note in the evidence (for runs that count hundreds). Both
// settle the spec's asynchronous operations first (S.Settle).
func (o *Op) CountQuiet() check.Count {
	o.s.Settle()
	c := check.Count{Op: o.Def.Name, Tenant: tenantName(o.Tenant), Ref: o.Ref, Key: o.Key}
	if o.Def.Observer == nil {
		return c
	}
	c = o.s.settledCount(c, o.Def, o.metaTenant(), o.Key)
	ctx, cancel := o.s.AttemptCtx(2)
	defer cancel()
	n, err := o.countCtx(ctx)
	c.Taken, c.N = true, n
	if err != nil {
		c.Err = err.Error()
	}
	return c
}

// countCtx asks the observer; its error is redacted.
func (o *Op) countCtx(ctx context.Context) (int, error) {
	n, err := o.s.Target.CountRecords(ctx, o.Def, o.Tenant, o.Vars(), o.s.Observer)
	if err != nil {
		// An observer's error quotes what it answered, which may echo the credentials it was sent.
		err = errors.New(o.s.History.Redactor().String(err.Error()))
	}
	return n, err
}

// Instance picks an instance: i modulo their number, or a random one for i < 0.
func (e *Env) Instance(i int) *targets.Instance {
	n := len(e.Target.Instances)
	if i < 0 {
		i = e.intn(n)
	}
	return &e.Target.Instances[i%n]
}

// SetBody replaces a request's body with one the transport cannot re-send by itself.
func SetBody(req *http.Request, body []byte) {
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = nil
}

// metaTenant is the tenant as the attempts of o name it ("" for none).
func (o *Op) metaTenant() string {
	if o.Tenant == nil {
		return ""
	}
	return o.Tenant.Name
}

// tenantName is a tenant's name, "-" for none.
func tenantName(t *targets.Tenant) string {
	if t == nil {
		return "-"
	}
	return t.Name
}

// slowHook is the target's slow hook, or nil.
func (o *Op) slowHook() *targets.SlowHook {
	if h := o.s.Target.Hooks; h != nil {
		return h.Slow
	}
	return nil
}
