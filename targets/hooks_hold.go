package targets

import (
	"context"
	"fmt"
	"net/http"
)

// HoldHook holds an API's publications between its commit and its publication
// (hooks.hold_publish), as a test deployment of an outbox may offer it: a request that makes an
// instance hold each publication before it publishes, a request that counts the publications it
// holds now, and optionally one that lets them go. event-after-crash kills an instance once it
// holds one: the kill lands between a commit and its publication for certain.
type HoldHook struct {
	// Hold is sent to an instance: from then on each of its publications waits before it
	// publishes, until released or the instance ends.
	Hold *HookRequest
	// Held reads how many publications an instance holds now (a GET and a JSONPath to a number).
	Held *HTTPObserver
	// Release lets them go; nil = only the instance's end does (a kill, a restart).
	Release *HookRequest
}

// holdFields are the placeholders of the hold_publish hook's requests: no operation's.
var holdFields = []string{"Tenant"}

// holdHook decodes hooks.hold_publish: hold and held required, release optional.
func (d *decoder) holdHook(o *object) *HoldHook {
	ho, ok := d.child(o, "hold_publish")
	if !ok {
		return nil
	}
	h := &HoldHook{}
	request := func(name, method string) *HookRequest {
		ro, ok := d.child(ho, name)
		if !ok {
			return nil
		}
		r := &HookRequest{}
		d.requestWith(ro, &r.req, method, holdFields)
		r.Method, r.Path = r.req.method, srcOf(r.req.path)
		return r
	}
	switch {
	case !ho.has("hold"):
		d.ps.add(ho.line, ho.at("hold"), "missing required field (the request that makes an instance hold its publications, such as {method: POST, path: /_test/hold-publish})")
	default:
		h.Hold = request("hold", http.MethodPost)
	}
	switch {
	case !ho.has("held"):
		d.ps.add(ho.line, ho.at("held"), "missing required field (how many publications an instance holds: {path: /_test/hold-publish, jsonpath: $.held}; the harness kills once one is held)")
	default:
		h.Held = d.httpObserver(ho, "held", holdFields, " (such as $.held)")
	}
	if ho.has("release") {
		h.Release = request("release", http.MethodDelete)
	}
	if h.Hold == nil || h.Held == nil {
		return nil
	}
	return h
}

// CanHoldPublish reports whether the target declares a hold_publish hook.
func (h *Hooks) CanHoldPublish() bool { return h != nil && h.HoldPublish != nil }

// SendHoldPublish sends the hold_publish hook's hold request to an instance, as a tenant, and
// expects a 2xx.
func (t *Target) SendHoldPublish(ctx context.Context, hc *http.Client, inst *Instance, tn *Tenant) error {
	return sendHook(ctx, hc, inst, tn, t.Hooks.HoldPublish.Hold, holdVars(tn), "hooks.hold_publish.hold")
}

// SendReleasePublish sends the hold_publish hook's release request to an instance; it does
// nothing when none is declared.
func (t *Target) SendReleasePublish(ctx context.Context, hc *http.Client, inst *Instance, tn *Tenant) error {
	r := t.Hooks.HoldPublish.Release
	if r == nil {
		return nil
	}
	return sendHook(ctx, hc, inst, tn, r, holdVars(tn), "hooks.hold_publish.release")
}

// HeldPublications asks an instance how many publications it holds now (hold_publish.held).
func (t *Target) HeldPublications(ctx context.Context, hc *http.Client, inst *Instance, tn *Tenant) (int, error) {
	n, err := t.Hooks.HoldPublish.Held.count(ctx, inst, tn, holdVars(tn), hc)
	if err != nil {
		return 0, fmt.Errorf("hooks.hold_publish.held: %w", err)
	}
	return n, nil
}

// holdVars are what the hold_publish requests see: the tenant's name.
func holdVars(tn *Tenant) Vars {
	if tn == nil {
		return Vars{}
	}
	return Vars{Tenant: tn.Name}
}
