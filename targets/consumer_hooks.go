package targets

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
)

// ConsumerHooks are the test hooks of a consumer (consumers[].hooks): a request that makes the
// first handling of one event fail, and headers that make one handling slow. Where no
// downstream is declared, the fault properties use them to reach into a consumer that calls
// nothing of the harness's.
type ConsumerHooks struct {
	// FailNext is sent to every instance just before an event's first delivery (its templates
	// see the event's fields: {{.EventID}}); it arms a failure of the first handling of that
	// event on whichever instance handles it. nil = none.
	FailNext *HookRequest
	// Slow makes one handling take {{.Ms}} milliseconds: headers of the webhook request, or of
	// the queue message. nil = none.
	Slow *SlowHook
}

// CanFail reports whether the consumer declares a fail_next hook.
func (h *ConsumerHooks) CanFail() bool { return h != nil && h.FailNext != nil }

// CanSlow reports whether the consumer declares a slow hook.
func (h *ConsumerHooks) CanSlow() bool { return h != nil && h.Slow != nil }

// consumerSlowFields are the placeholders of a consumer's hooks.slow headers.
var consumerSlowFields = append(slices.Clone(consumerFields), "Ms")

// consumerHooks decodes a consumer's hooks block.
func (d *decoder) consumerHooks(o *object, c *Consumer) *ConsumerHooks {
	if !o.has("hooks") {
		return nil
	}
	ho, ok := d.object(o.fields["hooks"].val, o.at("hooks"), "fail_next", "slow")
	if !ok {
		return nil
	}
	h := &ConsumerHooks{}
	if ho.has("fail_next") {
		if fo, ok := d.object(ho.fields["fail_next"].val, ho.at("fail_next"), "method", "path", "query", "headers", "body", "body_format"); ok {
			r := &HookRequest{}
			d.requestWith(fo, &r.req, "POST", consumerFields)
			r.Method, r.Path = r.req.method, srcOf(r.req.path)
			if !r.req.mentions("EventID") {
				d.ps.add(fo.line, ho.at("fail_next"), "must name the event whose handling fails: use {{.EventID}} in its path, query, headers or body")
			}
			h.FailNext = r
		}
	}
	if ho.has("slow") {
		if so, ok := d.object(ho.fields["slow"].val, ho.at("slow"), "headers"); ok {
			s := &SlowHook{}
			var declared int
			s.headers, declared = d.tmplHeaders(so, consumerSlowFields)
			if declared == 0 {
				d.ps.add(so.line, ho.at("slow"), "needs headers (of the webhook request or the queue message), e.g. {X-Test-Delay: \"{{.Ms}}\"}")
			}
			s.Headers = headerMap(s.headers)
			h.Slow = s
		}
	}
	return h
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

// SlowHeaders renders a consumer's slow hook for one event's handling to take ms
// milliseconds: the headers to set on its webhook request or queue message.
func (c *Consumer) SlowHeaders(v EventVars, ms int64) (map[string]string, error) {
	v.Ms = strconv.FormatInt(ms, 10)
	out := map[string]string{}
	for _, h := range c.Hooks.Slow.headers {
		val, err := h.tmpl.render(v)
		if err != nil {
			return nil, fmt.Errorf("consumer %s: hooks.slow.headers.%s: %w", c.Name, h.Name, err)
		}
		out[h.Name] = val
	}
	return out, nil
}

// SendFailNext sends a consumer's fail_next hook for one event to an instance and expects a
// 2xx.
func (c *Consumer) SendFailNext(ctx context.Context, hc *http.Client, inst *Instance, v EventVars) error {
	r := c.Hooks.FailNext
	req, pq, err := r.req.render(ctx, inst, nil, v)
	if err != nil {
		return fmt.Errorf("consumer %s: hooks.fail_next: %w", c.Name, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("consumer %s: hooks.fail_next: %w", c.Name, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("consumer %s: hooks.fail_next: %s %s answered %d: %s", c.Name, r.Method, pq, resp.StatusCode, msg)
	}
	return nil
}
