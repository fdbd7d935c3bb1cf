package suites

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/retrysafe/retrysafe/suites/history"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// Op is one logical operation of a spec: a declared operation with a fresh idempotency key
// and a fresh {{.Ref}}, sent as one tenant. Every attempt of the Op carries the same key.
type Op struct {
	env    *Env
	Def    *targets.Operation
	Key    string
	Ref    string
	Tenant *targets.Tenant
}

// NewOp starts a fresh operation of def as the default tenant.
func (e *Env) NewOp(def *targets.Operation) *Op {
	n := e.next()
	op := &Op{
		env:    e,
		Def:    def,
		Key:    fmt.Sprintf("%s-%04d", e.Settings.KeyPrefix, n),
		Ref:    fmt.Sprintf("rs-%s-%04d", e.Settings.RunID, n),
		Tenant: e.defaultTenant(),
	}
	e.note(op)
	return op
}

// Again returns an operation with the same key, ref and tenant on another declared
// operation (for the scope checks).
func (o *Op) Again(def *targets.Operation) *Op {
	c := *o
	c.Def = def
	o.env.note(&c)
	return &c
}

// As returns the same operation (same key and ref) sent as another tenant.
func (o *Op) As(t *targets.Tenant) *Op {
	c := *o
	c.Tenant = t
	o.env.note(&c)
	return &c
}

// WithKey returns the same operation (same ref, body) under another key.
func (o *Op) WithKey(key string) *Op {
	c := *o
	c.Key = key
	o.env.note(&c)
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
	// Key says how the key is sent (omitted, a form, a raw value).
	Key targets.KeyMode
	// Auth: "" = the op's tenant, "none" = no credentials, "unknown" = wrong credentials.
	Auth string
}

func (o *Op) vars() targets.Vars {
	tenant := ""
	if o.Tenant != nil {
		tenant = o.Tenant.Name
	}
	return targets.Vars{Ref: o.Ref, Key: o.Key, Tenant: tenant}
}

// Do sends one attempt and returns it as recorded in the history.
func (o *Op) Do(s Send) history.Attempt {
	ctx, cancel := o.env.ctx(1)
	defer cancel()
	return o.DoCtx(ctx, s)
}

// DoCtx is Do with a context.
func (o *Op) DoCtx(ctx context.Context, s Send) history.Attempt {
	o.env.halt()
	req, meta, err := o.Build(ctx, s)
	if err != nil {
		return history.Attempt{Op: o.Def.Name, Key: o.Key, Outcome: history.Failed, Err: "build request: " + err.Error()}
	}
	return o.env.Client.Do(ctx, req, meta)
}

// Build renders the attempt's request without sending it.
func (o *Op) Build(ctx context.Context, s Send) (*http.Request, httpclient.Meta, error) {
	ins := o.env.instance(s.Instance)
	if s.Via != nil {
		ins = s.Via
	}
	tenant := o.Tenant
	if s.Auth != "" {
		tenant = o.badTenant(s.Auth)
	}
	req, body, err := o.Def.Build(targets.BuildInput{
		Context: ctx, Instance: ins, Tenant: tenant, Vars: o.vars(), Variant: s.Variant, Key: s.Key,
	})
	if err != nil {
		return nil, httpclient.Meta{}, err
	}
	if s.Reformat {
		if body, err = targets.Reformat(body, o.Def.BodyFormat); err != nil {
			return nil, httpclient.Meta{}, err
		}
		setBody(req, body)
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

// badTenant returns the tenant to send as for Auth "none" (nil) or "unknown" (the op's
// tenant headers with every value replaced).
func (o *Op) badTenant(auth string) *targets.Tenant {
	if auth != "unknown" || o.Tenant == nil {
		return nil
	}
	bad := &targets.Tenant{Name: "unknown", Headers: map[string]string{}}
	for name, v := range o.Tenant.Headers {
		if scheme, _, ok := strings.Cut(v, " "); ok {
			bad.Headers[name] = scheme + " retrysafe-unknown-credential"
		} else {
			bad.Headers[name] = "retrysafe-unknown-credential"
		}
	}
	return bad
}

// Count returns the number of business records of this operation's ref for its tenant.
func (o *Op) Count() (int, error) { return o.count(true) }

// count counts records, noting the count in the spec's evidence when asked.
func (o *Op) count(note bool) (int, error) {
	o.env.halt()
	ctx, cancel := o.env.ctx(2)
	defer cancel()
	n, err := o.countCtx(ctx)
	if note {
		o.env.noteCount(o, n, err)
	}
	return n, err
}

// countCtx asks the observer; its error is redacted.
func (o *Op) countCtx(ctx context.Context) (int, error) {
	n, err := o.env.Target.CountRecords(ctx, o.Def, o.Tenant, o.vars(), o.env.observer)
	if err != nil {
		// An observer's error quotes what it answered, which may echo the credentials it was sent.
		err = errors.New(o.env.History.Redactor().String(err.Error()))
	}
	return n, err
}

// instance picks an instance: i modulo their number, or a random one for i < 0.
func (e *Env) instance(i int) *targets.Instance {
	n := len(e.Target.Instances)
	if i < 0 {
		i = e.intn(n)
	}
	return &e.Target.Instances[i%n]
}

// setBody replaces a request's body with one the transport cannot re-send by itself.
func setBody(req *http.Request, body []byte) {
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = nil
}
