package targets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// ConsumerHooks are the test hooks of a consumer (consumers[].hooks), as workers have them: a
// way to make a handling fail (a request sent to the instances, or a header on the event's first
// delivery), at one or several points of the handling, and a way to make handlings slow (headers
// of one delivery, or the environment the consumer is restarted with). Where no downstream is
// declared, the fault properties use them to reach into a consumer that calls nothing of the
// harness's.
type ConsumerHooks struct {
	// FailNext are the ways to fail a handling, one per failure point (FailBeforeEffect,
	// FailAfterEffect; one with When "" when the hook names no point). Nil = none.
	FailNext []*FailHook
	// Disarm is sent to every instance after a spec that armed a failure of the next handling
	// of any event (a FailHook with AnyEvent): the instances that did not handle the event must
	// not fail a later one. Nil = none.
	Disarm *HookRequest
	// Slow makes handlings take {{.Ms}} milliseconds: headers of one delivery, or the environment
	// the managed consumer is restarted with. Nil = none.
	Slow *SlowHook

	// where slow.env is, for the checks that need the whole target
	envLine int
	envAt   string
}

// The points of a handling at which a fail_next hook can fail it ({{.When}}).
const (
	// FailBeforeEffect fails the handling before its effect: nothing was applied.
	FailBeforeEffect = "before-effect"
	// FailAfterEffect fails the handling once its effect was applied: the consumer answers an
	// error (or does not acknowledge) although the event took effect.
	FailAfterEffect = "after-effect"
)

// FailPoints are the failure points a fail_next hook may name, in the order they are tried.
var FailPoints = []string{FailBeforeEffect, FailAfterEffect}

// FailHook is one way of failing a consumer's handling.
type FailHook struct {
	// When is the point of the handling it fails ("" = the one the consumer's hook has: it names
	// none).
	When string
	// Request is sent to every instance just before the event's first delivery (its templates
	// see the event's fields and {{.When}}); nil when the failure travels in MessageHeaders.
	Request *HookRequest
	// MessageHeaders are set on the event's first delivery only (a queue message's headers, or
	// a webhook request's): the documented contract is "fail when the header is present and the
	// delivery is not a redelivery". Nil with a Request.
	MessageHeaders map[string]string
	// AnyEvent says the request names no event ({{.EventID}}): it arms a failure of the next
	// handling of any event, so the harness sends that event alone with nothing else in flight.
	AnyEvent bool

	messageHeaders []header
	line           int
	path           string
}

// CanFail reports whether the consumer declares a fail_next hook.
func (h *ConsumerHooks) CanFail() bool { return h != nil && len(h.FailNext) > 0 }

// CanSlow reports whether the consumer declares a slow hook.
func (h *ConsumerHooks) CanSlow() bool { return h != nil && h.Slow != nil }

// SlowByEnv reports whether the slow hook is an environment the consumer is restarted with.
func (h *ConsumerHooks) SlowByEnv() bool { return h.CanSlow() && len(h.Slow.env) > 0 }

// requests reports whether a hook is a request sent to an instance.
func (h *ConsumerHooks) requests() bool {
	if h == nil {
		return false
	}
	return h.Disarm != nil || slices.ContainsFunc(h.FailNext, func(f *FailHook) bool { return f.Request != nil })
}

// consumerHookFields are the placeholders of a consumer's fail_next hook.
var consumerHookFields = append(slices.Clone(consumerFields), "When")

// consumerSlowFields are the placeholders of a consumer's hooks.slow headers.
var consumerSlowFields = append(slices.Clone(consumerFields), "Ms")

// consumerHooks decodes a consumer's hooks block.
func (d *decoder) consumerHooks(o *object, c *Consumer) *ConsumerHooks {
	if !o.has("hooks") {
		return nil
	}
	ho, ok := d.child(o, "hooks")
	if !ok {
		return nil
	}
	h := &ConsumerHooks{}
	if ho.has("fail_next") {
		h.FailNext = d.failHooks(ho)
	}
	if ho.has("disarm") {
		if do, ok := d.child(ho, "disarm"); ok {
			r := &HookRequest{}
			d.requestWith(do, &r.req, "POST", nil)
			r.Method, r.Path = r.req.method, srcOf(r.req.path)
			h.Disarm = r
		}
	}
	if ho.has("slow") {
		h.Slow = d.consumerSlow(ho, h)
	}
	return h
}

// failHooks decodes hooks.fail_next: one hook (a request or message headers; one using
// {{.When}} is tried at every point), or a list of them, each naming its point with when.
func (d *decoder) failHooks(ho *object) []*FailHook {
	path := ho.at("fail_next")
	if seq, ok := ho.fields["fail_next"].val.(*ast.SequenceNode); ok {
		var out []*FailHook
		seen := map[string]bool{}
		for i, n := range seq.Values {
			f := d.failHook(n, fmt.Sprintf("%s[%d]", path, i), ho.sub("fail_next"), true)
			if f == nil {
				continue
			}
			if seen[f.When] {
				d.ps.add(f.line, f.path+".when", "point %q is declared twice", f.When)
				continue
			}
			seen[f.When] = true
			out = append(out, f)
		}
		return out
	}
	f := d.failHook(ho.fields["fail_next"].val, path, ho.sub("fail_next"), false)
	switch {
	case f == nil:
		return nil
	case f.When == "" && f.mentions("When"):
		out := make([]*FailHook, len(FailPoints))
		for i, w := range FailPoints {
			g := *f
			g.When = w
			out[i] = &g
		}
		return out
	}
	return []*FailHook{f}
}

// failHook decodes one fail_next hook at path (schema names it in the registry of fields);
// inList says it is an element of a list, which must name its point.
func (d *decoder) failHook(n ast.Node, path, schema string, inList bool) *FailHook {
	fo, ok := d.object(n, path, schema)
	if !ok {
		return nil
	}
	f := &FailHook{line: fo.line, path: path}
	if s, ok := d.str(fo, "when"); ok {
		f.When = strings.TrimSpace(s)
		if !slices.Contains(FailPoints, f.When) {
			d.ps.add(fo.lineOf("when"), fo.at("when"), "must be %s, got %q", strings.Join(FailPoints, " or "), s)
		}
	} else if inList {
		d.ps.add(fo.line, fo.at("when"), "missing required field (the point this hook fails the handling at: %s)", strings.Join(FailPoints, " or "))
	}
	if fo.has("message_headers") {
		for _, other := range []string{"method", "path", "query", "headers", "body", "body_format"} {
			if fo.has(other) {
				d.ps.add(fo.lineOf(other), fo.at(other), "declare a hook request (method, path, query, headers, body) or message_headers, not both")
			}
		}
		var declared int
		f.messageHeaders, declared = d.tmplHeadersAt(fo, "message_headers", consumerHookFields)
		if declared == 0 {
			d.ps.add(fo.line, fo.at("message_headers"), "needs at least one header, e.g. {X-Test-Fail: \"{{.When}}\"}")
		}
		f.MessageHeaders = headerMap(f.messageHeaders)
		return f
	}
	r := &HookRequest{}
	d.requestWith(fo, &r.req, "POST", consumerHookFields)
	r.Method, r.Path = r.req.method, srcOf(r.req.path)
	f.Request, f.AnyEvent = r, !r.req.mentions("EventID")
	return f
}

// mentions reports whether the hook's request or headers use the field.
func (f *FailHook) mentions(field string) bool {
	if f.Request != nil {
		return f.Request.req.mentions(field)
	}
	return slices.ContainsFunc(f.messageHeaders, func(h header) bool { return h.tmpl.uses(field) })
}

// consumerSlow decodes hooks.slow: exactly one of headers (of the webhook request or the queue
// message), message_headers (the same, by the name a queue worker knows them) and env (the
// environment the managed consumer is restarted with).
func (d *decoder) consumerSlow(ho *object, h *ConsumerHooks) *SlowHook {
	so, ok := d.child(ho, "slow")
	if !ok {
		return nil
	}
	var ways []string
	for _, f := range []string{"headers", "message_headers", "env"} {
		if so.has(f) {
			ways = append(ways, f)
		}
	}
	s := &SlowHook{}
	if len(ways) != 1 {
		d.ps.add(so.line, ho.at("slow"), "declare one of headers or message_headers (of the delivery, e.g. {X-Test-Delay: \"{{.Ms}}\"}) or env (the consumer restarted with it, e.g. {EFFECT_DELAY_MS: \"{{.Ms}}\"})")
		return s
	}
	var declared int
	switch ways[0] {
	case "env":
		s.env, declared = d.tmplHeadersAt(so, "env", []string{"Ms"})
		s.Env = headerMap(s.env)
		h.envLine, h.envAt = so.lineOf("env"), so.at("env")
	default:
		s.headers, declared = d.tmplHeadersAt(so, ways[0], consumerSlowFields)
		s.Headers = headerMap(s.headers)
	}
	if declared == 0 {
		d.ps.add(so.line, so.at(ways[0]), "needs at least one entry, whose value is a template over {{.Ms}}")
	}
	return s
}

// checkConsumerHooks reports the hooks that the rest of the target cannot serve: a request that
// arms any event's next handling on several instances without a disarm, and a slow environment
// without a lifecycle to restart the consumer with it.
func (d *decoder) checkConsumerHooks(t *Target) {
	for _, c := range t.Consumers {
		h := c.Hooks
		if h == nil {
			continue
		}
		for _, f := range h.FailNext {
			if f.AnyEvent && len(t.Instances) > 1 && h.Disarm == nil {
				d.ps.add(f.line, f.path, "arms a failure of the next handling of any event (it names no {{.EventID}}) on each of the %d instances, and only one handles the event: "+
					"declare hooks.disarm, a request the harness sends to every instance after the spec, so that the others do not fail a later handling", len(t.Instances))
			}
		}
		if h.SlowByEnv() && t.Lifecycle == nil {
			d.ps.add(h.envLine, h.envAt, "the harness restarts the consumer with this environment for a slow handling: the target needs a lifecycle")
		}
	}
}

// mentions reports whether any template of the request uses the field.
func (r *request) mentions(field string) bool {
	for _, t := range []*tmpl{r.path, r.query, r.body} {
		if t != nil && t.uses(field) {
			return true
		}
	}
	for _, h := range r.headers {
		if h.tmpl.uses(field) {
			return true
		}
	}
	return false
}
