package targets

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Hooks are the black-box fault hooks a test deployment offers (the target file's hooks): a
// request that makes the next attempt fail, and headers that make one attempt slow. Without a
// downstream binding, the error-replay and slow-first-attempt properties use them.
type Hooks struct {
	// FailNext is sent just before an attempt so that this attempt fails; nil = none.
	FailNext *HookRequest
	// Slow makes one attempt take {{.Ms}} milliseconds; nil = none.
	Slow *SlowHook
	// HoldPublish holds the API's publications between its commit and its publication; nil =
	// none.
	HoldPublish *HoldHook
}

// HookRequest is a request the harness sends to a hook (method, path, query, headers, body).
type HookRequest struct {
	Method, Path string

	req request
}

// SlowHook is what makes an attempt slow: headers whose values are templates over {{.Ms}}
// (and the request's {{.Ref}}, {{.Key}}, {{.Tenant}}).
type SlowHook struct {
	Headers map[string]string
	// Env is, on a consumer, the environment (values over {{.Ms}}) the harness restarts the
	// managed consumer with for the specs that need a slow handling (hooks.slow.env); empty
	// when the slow hook is headers.
	Env map[string]string

	headers []header
	env     []header
}

// CanFail reports whether the target declares a fail_next hook.
func (h *Hooks) CanFail() bool { return h != nil && h.FailNext != nil }

// CanSlow reports whether the target declares a slow hook.
func (h *Hooks) CanSlow() bool { return h != nil && h.Slow != nil }

// hookFields are the placeholders of hooks.slow.headers.
var hookFields = []string{"Ref", "Key", "Tenant", "Ms"}

// hooks decodes the top-level hooks block.
func (d *decoder) hooks(top *object) *Hooks {
	if !top.has("hooks") {
		return nil
	}
	o, ok := d.child(top, "hooks")
	if !ok {
		return nil
	}
	h := &Hooks{}
	if o.has("fail_next") {
		if fo, ok := d.child(o, "fail_next"); ok {
			r := &HookRequest{}
			d.request(fo, &r.req, "POST")
			r.Method, r.Path = r.req.method, srcOf(r.req.path)
			h.FailNext = r
		}
	}
	if o.has("slow") {
		if so, ok := d.child(o, "slow"); ok {
			s := &SlowHook{}
			var declared int
			s.headers, declared = d.tmplHeaders(so, hookFields)
			if declared == 0 { // declared ones with a bad template are reported as such
				d.ps.add(so.line, o.at("slow"), "needs headers, e.g. {X-Test-Delay: \"{{.Ms}}\"}")
			}
			s.Headers = headerMap(s.headers)
			h.Slow = s
		}
	}
	if o.has("hold_publish") {
		h.HoldPublish = d.holdHook(o)
	}
	return h
}

// apply sets the slow hook's headers on a request, rendered with ms milliseconds.
func (s *SlowHook) apply(req *http.Request, v Vars, ms int64) error {
	v.Ms = strconv.FormatInt(ms, 10)
	for _, h := range s.headers {
		val, err := h.tmpl.render(v)
		if err != nil {
			return fmt.Errorf("hooks.slow.headers.%s: %w", h.Name, err)
		}
		req.Header.Set(h.Name, val)
	}
	return nil
}

// SendFailNext sends the fail_next hook to an instance, as a tenant, and expects a 2xx.
func (t *Target) SendFailNext(ctx context.Context, hc *http.Client, inst *Instance, tn *Tenant, v Vars) error {
	return sendHook(ctx, hc, inst, tn, t.Hooks.FailNext, v, "hooks.fail_next")
}

// sendHook sends a hook's request to an instance, as a tenant, and expects a 2xx; field names
// the hook in errors.
func sendHook(ctx context.Context, hc *http.Client, inst *Instance, tn *Tenant, r *HookRequest, v any, field string) error {
	req, pq, err := r.req.render(ctx, inst, tn, v)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s %s answered %d: %s", field, r.Method, pq, resp.StatusCode, msg)
	}
	return nil
}
