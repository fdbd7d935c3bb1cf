package targets

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// hookedWebhook is a webhook consumer on %INSTANCES% with the hooks block %HOOKS% and a lifecycle
// when %LIFECYCLE% says so.
const hookedWebhook = `instances: [%INSTANCES%]
consumers:
  - name: w
    path: /hooks
    event: {body: '{"id": "{{.EventID}}"}'}
    effects: {http: {path: /e, jsonpath: $.n}}
    hooks:
%HOOKS%
%LIFECYCLE%`

const hookLifecycle = "lifecycle: {command: [worker, --addr, \"{{.Addr}}\"], durable: true}\n"

// hookedFile renders hookedWebhook.
func hookedFile(instances, hooks, lifecycle string) string {
	return strings.NewReplacer("%INSTANCES%", instances, "%HOOKS%", hooks, "%LIFECYCLE%", lifecycle).Replace(hookedWebhook)
}

const oneInstance, twoInstances = "http://127.0.0.1:8080", "http://127.0.0.1:8080, http://127.0.0.1:8081"

// points lists a consumer's fail_next points as "when:request|headers[:any]".
func points(c *Consumer) []string {
	var out []string
	for _, f := range c.Hooks.FailNext {
		s := f.When + ":"
		if f.Request != nil {
			s += "request"
		} else {
			s += "headers"
		}
		if f.AnyEvent {
			s += ":any"
		}
		out = append(out, s)
	}
	return out
}

// The shapes of fail_next: one hook without a point, one whose templates use {{.When}} (tried at
// every point), a list naming each point, message headers; a request without {{.EventID}} arms
// any event's next handling (with one instance, or a disarm hook); slow as headers, message
// headers or an environment.
func TestConsumerHooksParse(t *testing.T) {
	cases := []struct {
		name, instances, hooks, lifecycle string
		points                            []string
		disarm, slowEnv                   bool
	}{
		{"one request for the event", oneInstance, "      fail_next: {path: /fail, query: \"event={{.EventID}}\"}", "", []string{":request"}, false, false},
		{"one request at every point", oneInstance, "      fail_next: {path: /fail, query: \"event={{.EventID}}&when={{.When}}\"}", "",
			[]string{"before-effect:request", "after-effect:request"}, false, false},
		{"a list of points", oneInstance, "      fail_next:\n        - {when: after-effect, path: /fail/after, query: \"event={{.EventID}}\"}\n        - {when: before-effect, path: /fail/before, query: \"event={{.EventID}}\"}", "",
			[]string{"after-effect:request", "before-effect:request"}, false, false},
		{"one point named", oneInstance, "      fail_next: {when: after-effect, path: /fail, query: \"event={{.EventID}}\"}", "", []string{"after-effect:request"}, false, false},
		{"message headers at every point", oneInstance, "      fail_next: {message_headers: {X-Test-Fail: \"{{.When}}\"}}", "",
			[]string{"before-effect:headers", "after-effect:headers"}, false, false},
		{"any event on one instance", oneInstance, "      fail_next: {path: /fail}", "", []string{":request:any"}, false, false},
		{"any event on two instances, with a disarm", twoInstances, "      fail_next: {path: /fail}\n      disarm: {method: DELETE, path: /fail}", "",
			[]string{":request:any"}, true, false},
		{"slow as message headers", oneInstance, "      slow: {message_headers: {X-Test-Delay: \"{{.Ms}}\"}}", "", nil, false, false},
		{"slow as an environment", oneInstance, "      slow: {env: {EFFECT_DELAY_MS: \"{{.Ms}}\"}}", hookLifecycle, nil, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, probs := parseString(hookedFile(c.instances, c.hooks, c.lifecycle), nil)
			if probs != nil {
				t.Fatalf("problems: %v", probs)
			}
			cons := tg.Consumers[0]
			if got := points(cons); !slices.Equal(got, c.points) {
				t.Errorf("points %q, want %q", got, c.points)
			}
			if cons.Hooks.CanFail() != (len(c.points) > 0) || (cons.Hooks.Disarm != nil) != c.disarm || cons.Hooks.SlowByEnv() != c.slowEnv {
				t.Errorf("CanFail %v, disarm %v, slow by env %v; want %v, %v, %v", cons.Hooks.CanFail(), cons.Hooks.Disarm != nil, cons.Hooks.SlowByEnv(),
					len(c.points) > 0, c.disarm, c.slowEnv)
			}
		})
	}
}

// Hooks the target cannot serve, or that contradict each other, are located errors.
func TestConsumerHooksProblems(t *testing.T) {
	cases := []struct {
		name, instances, hooks, lifecycle string
		want                              []string
	}{
		{"any event on two instances without a disarm", twoInstances, "      fail_next: {path: /fail}", "",
			[]string{"t.yaml:8: consumers[0].hooks.fail_next: arms a failure of the next handling of any event (it names no {{.EventID}}) on each of the 2 instances, and only one handles the event: declare hooks.disarm"}},
		{"a list element without its point", oneInstance, "      fail_next:\n        - {path: /fail, query: \"event={{.EventID}}\"}", "",
			[]string{"t.yaml:9: consumers[0].hooks.fail_next[0].when: missing required field (the point this hook fails the handling at: before-effect or after-effect)"}},
		{"an unknown point", oneInstance, "      fail_next: {when: during, path: /fail, query: \"event={{.EventID}}\"}", "",
			[]string{"t.yaml:8: consumers[0].hooks.fail_next.when: must be before-effect or after-effect, got \"during\""}},
		{"a point twice", oneInstance, "      fail_next:\n        - {when: after-effect, path: /a, query: \"event={{.EventID}}\"}\n        - {when: after-effect, path: /b, query: \"event={{.EventID}}\"}", "",
			[]string{"t.yaml:10: consumers[0].hooks.fail_next[1].when: point \"after-effect\" is declared twice"}},
		{"a request and message headers", oneInstance, "      fail_next: {path: /fail, message_headers: {X-Test-Fail: \"1\"}}", "",
			[]string{"t.yaml:8: consumers[0].hooks.fail_next.path: declare a hook request (method, path, query, headers, body) or message_headers, not both"}},
		{"an unknown placeholder in the headers", oneInstance, "      fail_next: {message_headers: {X-Test-Fail: \"{{.Whn}}\"}}", "",
			[]string{"t.yaml:8: consumers[0].hooks.fail_next.message_headers.X-Test-Fail: unknown placeholder {{.Whn}}"}},
		{"a slow environment without a lifecycle", oneInstance, "      slow: {env: {EFFECT_DELAY_MS: \"{{.Ms}}\"}}", "",
			[]string{"t.yaml:8: consumers[0].hooks.slow.env: the harness restarts the consumer with this environment for a slow handling: the target needs a lifecycle"}},
		{"slow two ways", oneInstance, "      slow: {headers: {X-Test-Delay: \"{{.Ms}}\"}, env: {EFFECT_DELAY_MS: \"{{.Ms}}\"}}", hookLifecycle,
			[]string{"t.yaml:8: consumers[0].hooks.slow: declare one of headers or message_headers"}},
		{"an event field in the slow environment", oneInstance, "      slow: {env: {EFFECT_DELAY_MS: \"{{.EventID}}\"}}", hookLifecycle,
			[]string{"t.yaml:8: consumers[0].hooks.slow.env.EFFECT_DELAY_MS: unknown placeholder {{.EventID}} (known: .Ms)"}},
		{"a placeholder in the disarm", oneInstance, "      fail_next: {path: /fail}\n      disarm: {path: \"/fail/{{.EventID}}\"}", "",
			[]string{"t.yaml:9: consumers[0].hooks.disarm.path: unknown placeholder {{.EventID}}"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(hookedFile(c.instances, c.hooks, c.lifecycle), nil)
			wantProblems(t, probs, c.want)
		})
	}
}

// redelivery_after is a queue consumer's, where the broker cannot be asked.
func TestRedeliveryAfter(t *testing.T) {
	tg, probs := parseString(queueFile("amqp", amqpDefault, "    redelivery_after: 30s"), nil)
	if probs != nil || tg.Consumers[0].RedeliveryAfter.String() != "30s" {
		t.Fatalf("amqp: %v, %v; want 30s", tg, probs)
	}
	_, probs = parseString(queueFile("nats", "nats: {url: nats://127.0.0.1:4222, stream: s, subject: s.e, durable: d}", "    redelivery_after: 30s"), nil)
	wantProblems(t, probs, []string{`t.yaml:7: consumers[0].redelivery_after: JetStream tells the AckWait and BackOff of nats.durable "d"`})
	_, probs = parseString(hookedFile(oneInstance, "      slow: {headers: {X-Test-Delay: \"{{.Ms}}\"}}", "")+"", nil)
	if probs != nil {
		t.Fatalf("webhook without redelivery_after: %v", probs)
	}
	web := strings.Replace(hookedFile(oneInstance, "      slow: {headers: {X-Test-Delay: \"{{.Ms}}\"}}", ""), "    hooks:", "    redelivery_after: 1s\n    hooks:", 1)
	_, probs = parseString(web, nil)
	wantProblems(t, probs, []string{"t.yaml:7: consumers[0].redelivery_after: a webhook's redeliveries are the harness's own"})
}

// The hooks render with the event and the point: a fail_next request carries {{.When}}, message
// headers too, the slow environment {{.Ms}}, and the disarm is its own request.
func TestConsumerHooksRender(t *testing.T) {
	srv, got := hookServer(t, http.StatusOK, "armed")
	tg, probs := parseString(hookedFile(srv.URL, `      fail_next: {path: /fail, query: "event={{.EventID}}&when={{.When}}"}
      disarm: {method: DELETE, path: /fail}
      slow: {env: {EFFECT_DELAY_MS: "{{.Ms}}", WORKER_MODE: test}}`, hookLifecycle), nil)
	if probs != nil {
		t.Fatal(probs)
	}
	c, in := tg.Consumers[0], &tg.Instances[0]
	v := EventVars{EventID: "evt_1"}
	if err := c.SendFailNext(context.Background(), http.DefaultClient, in, c.Hooks.FailNext[1], v); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.method != "POST" || r.path != "/fail" || r.query != "event=evt_1&when=after-effect" {
		t.Errorf("fail_next sent %s %s?%s, want POST /fail?event=evt_1&when=after-effect", r.method, r.path, r.query)
	}
	if err := c.SendDisarm(context.Background(), http.DefaultClient, in); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.method != "DELETE" || r.path != "/fail" {
		t.Errorf("disarm sent %s %s, want DELETE /fail", r.method, r.path)
	}
	env, err := c.SlowEnv(250)
	if err != nil || !slices.Equal(env, []string{"EFFECT_DELAY_MS=250", "WORKER_MODE=test"}) {
		t.Errorf("SlowEnv = %q, %v; want EFFECT_DELAY_MS=250 WORKER_MODE=test", env, err)
	}
	hdr, probs := parseString(hookedFile(oneInstance, `      fail_next: {message_headers: {X-Test-Fail: "{{.When}}", X-Event: "{{.EventID}}"}}`, ""), nil)
	if probs != nil {
		t.Fatal(probs)
	}
	h, err := hdr.Consumers[0].FailHeaders(hdr.Consumers[0].Hooks.FailNext[0], v)
	if want := map[string]string{"X-Test-Fail": "before-effect", "X-Event": "evt_1"}; err != nil || !maps.Equal(h, want) {
		t.Errorf("FailHeaders = %v, %v; want %v", h, err, want)
	}
}
