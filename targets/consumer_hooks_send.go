package targets

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// SlowHeaders renders a consumer's slow hook for one event's handling to take ms
// milliseconds: the headers to set on its webhook request or queue message (none when the slow
// hook is an environment).
func (c *Consumer) SlowHeaders(v EventVars, ms int64) (map[string]string, error) {
	v.Ms = strconv.FormatInt(ms, 10)
	return renderHeaders(c.Hooks.Slow.headers, v, c.Name, "hooks.slow.headers")
}

// SlowEnv renders a consumer's slow environment for every handling to take ms milliseconds:
// the "NAME=value" entries the managed consumer is restarted with.
func (c *Consumer) SlowEnv(ms int64) ([]string, error) {
	env, err := renderHeaders(c.Hooks.Slow.env, EventVars{Ms: strconv.FormatInt(ms, 10)}, c.Name, "hooks.slow.env")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(env))
	for _, h := range c.Hooks.Slow.env {
		out = append(out, h.Name+"="+env[h.Name])
	}
	return out, nil
}

// FailHeaders renders a fail_next hook's message headers for one event (none when the hook is a
// request): the headers to set on its first delivery only.
func (c *Consumer) FailHeaders(f *FailHook, v EventVars) (map[string]string, error) {
	v.When = f.When
	return renderHeaders(f.messageHeaders, v, c.Name, "hooks.fail_next.message_headers")
}

// renderHeaders renders templated headers (or environment entries) with v.
func renderHeaders(hs []header, v EventVars, consumer, field string) (map[string]string, error) {
	out := map[string]string{}
	for _, h := range hs {
		val, err := h.tmpl.render(v)
		if err != nil {
			return nil, fmt.Errorf("consumer %s: %s.%s: %w", consumer, field, h.Name, err)
		}
		out[h.Name] = val
	}
	return out, nil
}

// SendFailNext sends a consumer's fail_next hook request for one event (and the hook's point)
// to an instance and expects a 2xx.
func (c *Consumer) SendFailNext(ctx context.Context, hc *http.Client, inst *Instance, f *FailHook, v EventVars) error {
	v.When = f.When
	return c.sendHook(ctx, hc, inst, f.Request, "hooks.fail_next", v)
}

// SendDisarm sends a consumer's disarm hook to an instance and expects a 2xx.
func (c *Consumer) SendDisarm(ctx context.Context, hc *http.Client, inst *Instance) error {
	return c.sendHook(ctx, hc, inst, c.Hooks.Disarm, "hooks.disarm", EventVars{})
}

// sendHook sends one hook request to an instance and expects a 2xx.
func (c *Consumer) sendHook(ctx context.Context, hc *http.Client, inst *Instance, r *HookRequest, field string, v EventVars) error {
	if r == nil {
		return fmt.Errorf("consumer %s: %s is not a request", c.Name, field)
	}
	req, pq, err := r.req.render(ctx, inst, nil, v)
	if err != nil {
		return fmt.Errorf("consumer %s: %s: %w", c.Name, field, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("consumer %s: %s: %w", c.Name, field, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("consumer %s: %s: %s %s answered %d: %s", c.Name, field, r.Method, pq, resp.StatusCode, msg)
	}
	return nil
}
