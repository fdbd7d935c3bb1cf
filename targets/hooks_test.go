package targets

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// hooksTarget parses a one-operation target sent to base, with tenant alice and the given hooks
// block.
func hooksTarget(t *testing.T, base, hooks string) *Target {
	t.Helper()
	return authTarget(t, base, "tenants:\n  - name: alice\n    identity: {X-Tenant: alice}\n    headers: {Authorization: Bearer alice-0123456}\n", hooks)
}

const fullHooks = `hooks:
  fail_next:
    method: put
    path: "/_test/fail/{{.Ref}}"
    query: "tenant={{.Tenant}}"
    headers: {X-Hook: "on-{{.Key}}"}
    body: '{"status": 503, "ref": "{{.Ref}}"}'
  slow:
    headers: {X-Test-Delay: "{{.Ms}}", X-Delay-Ref: "{{.Ref}}-{{.Ms}}"}
`

func TestHooksParse(t *testing.T) {
	cases := []struct {
		name, hooks      string
		canFail, canSlow bool
		method, path     string
		slow             map[string]string
	}{
		{"none", "", false, false, "", "", nil},
		{"null", "hooks:\n", false, false, "", "", nil},
		{"both", fullHooks, true, true, "PUT", "/_test/fail/{{.Ref}}",
			map[string]string{"X-Test-Delay": "{{.Ms}}", "X-Delay-Ref": "{{.Ref}}-{{.Ms}}"}},
		{"fail_next alone, POST by default", "hooks:\n  fail_next: {path: /_test/fail}\n", true, false, "POST", "/_test/fail", nil},
		{"slow alone", "hooks:\n  slow: {headers: {X-Test-Delay: \"{{.Ms}}\"}}\n", false, true, "", "",
			map[string]string{"X-Test-Delay": "{{.Ms}}"}},
		{"empty block", "hooks: {}\n", false, false, "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hooksTarget(t, "http://127.0.0.1:1", c.hooks).Hooks
			if h.CanFail() != c.canFail || h.CanSlow() != c.canSlow {
				t.Errorf("CanFail, CanSlow = %v, %v; want %v, %v", h.CanFail(), h.CanSlow(), c.canFail, c.canSlow)
			}
			if c.canFail && (h.FailNext.Method != c.method || h.FailNext.Path != c.path) {
				t.Errorf("fail_next = %s %s, want %s %s", h.FailNext.Method, h.FailNext.Path, c.method, c.path)
			}
			if c.canSlow && !equalMaps(h.Slow.Headers, c.slow) {
				t.Errorf("slow.headers = %v, want %v", h.Slow.Headers, c.slow)
			}
		})
	}
	var none *Hooks
	if none.CanFail() || none.CanSlow() {
		t.Errorf("a nil *Hooks can fail or slow")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// hookRequest is what a hook server received.
type hookRequest struct {
	method, path, query, body string
	header                    http.Header
}

// hookServer answers every request with status and body and hands what it received to the test.
func hookServer(t *testing.T, status int, body string) (*httptest.Server, <-chan hookRequest) {
	t.Helper()
	got := make(chan hookRequest, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- hookRequest{r.Method, r.URL.Path, r.URL.RawQuery, string(b), r.Header.Clone()}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestSendFailNext(t *testing.T) {
	cases := []struct {
		name, hooks  string
		status       int
		answer       string
		want         hookRequest
		wantHeaders  map[string]string
		wantErr      string // "" = no error
		noHeaderSent string
	}{
		{"full request, 204", fullHooks, http.StatusNoContent, "",
			hookRequest{method: "PUT", path: "/_test/fail/r-1", query: "tenant=alice", body: `{"status": 503, "ref": "r-1"}`},
			map[string]string{"Authorization": "Bearer alice-0123456", "X-Tenant": "alice", "X-Hook": "on-k-1", "Content-Type": "application/json"},
			"", ""},
		{"empty body, 200", "hooks:\n  fail_next: {path: /_test/fail}\n", http.StatusOK, "armed",
			hookRequest{method: "POST", path: "/_test/fail", body: ""},
			map[string]string{"Authorization": "Bearer alice-0123456", "X-Tenant": "alice"},
			"", "Content-Type"},
		{"form body", "hooks:\n  fail_next: {path: /f, body_format: form, body: 'status=503&ref={{.Ref}}'}\n", http.StatusAccepted, "",
			hookRequest{method: "POST", path: "/f", body: "status=503&ref=r-1"},
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			"", ""},
		{"404 is an error", "hooks:\n  fail_next: {path: /_test/fail}\n", http.StatusNotFound, "no such hook",
			hookRequest{method: "POST", path: "/_test/fail"}, nil,
			"hooks.fail_next: POST /_test/fail answered 404: no such hook", ""},
		{"500 is an error", fullHooks, http.StatusInternalServerError, "boom",
			hookRequest{method: "PUT", path: "/_test/fail/r-1", query: "tenant=alice", body: `{"status": 503, "ref": "r-1"}`}, nil,
			"hooks.fail_next: PUT /_test/fail/r-1?tenant=alice answered 500: boom", ""},
		{"a redirect is an error", "hooks:\n  fail_next: {path: /_test/fail}\n", http.StatusFound, "",
			hookRequest{method: "POST", path: "/_test/fail"}, nil,
			"answered 302", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := hookServer(t, c.status, c.answer)
			tg := hooksTarget(t, srv.URL, c.hooks)
			hc := tg.ObserverClient(0, 0)
			err := tg.SendFailNext(context.Background(), hc, &tg.Instances[0], tg.Tenants[0], Vars{Ref: "r-1", Key: "k-1", Tenant: "alice"})
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("SendFailNext: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("SendFailNext error = %v, want one containing %q", err, c.wantErr)
			}
			r := <-got
			if r.method != c.want.method || r.path != c.want.path || r.query != c.want.query || r.body != c.want.body {
				t.Errorf("received %s %s?%s %q; want %s %s?%s %q", r.method, r.path, r.query, r.body, c.want.method, c.want.path, c.want.query, c.want.body)
			}
			for name, want := range c.wantHeaders {
				if got := r.header.Get(name); got != want {
					t.Errorf("header %s = %q, want %q", name, got, want)
				}
			}
			if c.noHeaderSent != "" && r.header.Get(c.noHeaderSent) != "" {
				t.Errorf("header %s = %q, want none", c.noHeaderSent, r.header.Get(c.noHeaderSent))
			}
		})
	}
}

func TestSendFailNextUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	tg := hooksTarget(t, base, "hooks:\n  fail_next: {path: /_test/fail}\n")
	err := tg.SendFailNext(context.Background(), tg.ObserverClient(0, 0), &tg.Instances[0], tg.Tenants[0], Vars{})
	if err == nil || !strings.HasPrefix(err.Error(), "hooks.fail_next: ") {
		t.Errorf("SendFailNext to a closed server = %v, want a hooks.fail_next error", err)
	}
}

func TestSlowHookInBuild(t *testing.T) {
	tg := hooksTarget(t, "http://127.0.0.1:1", fullHooks)
	cases := []struct {
		name string
		slow *SlowHook
		ms   int64
		want map[string]string // "" = absent
	}{
		{"slow", tg.Hooks.Slow, 1500, map[string]string{"X-Test-Delay": "1500", "X-Delay-Ref": "r-1-1500"}},
		{"one millisecond", tg.Hooks.Slow, 1, map[string]string{"X-Test-Delay": "1", "X-Delay-Ref": "r-1-1"}},
		{"zero milliseconds", tg.Hooks.Slow, 0, map[string]string{"X-Test-Delay": "", "X-Delay-Ref": ""}},
		{"no hook", nil, 1500, map[string]string{"X-Test-Delay": "", "X-Delay-Ref": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _, err := tg.Operations[0].Build(BuildInput{Instance: &tg.Instances[0], Tenant: tg.Tenants[0],
				Vars: Vars{Ref: "r-1", Key: "k-1"}, Slow: c.slow, SlowMs: c.ms})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range c.want {
				if vs := req.Header.Values(name); (want == "") != (len(vs) == 0) || (want != "" && (len(vs) != 1 || vs[0] != want)) {
					t.Errorf("%s = %q, want %q", name, vs, want)
				}
			}
			if got := req.Header.Get("Idempotency-Key"); got != `"k-1"` {
				t.Errorf("Idempotency-Key = %q, want \"k-1\" beside the slow headers", got)
			}
			if got := req.Header.Get("Authorization"); got != "Bearer alice-0123456" {
				t.Errorf("Authorization = %q, want the tenant's", got)
			}
		})
	}
}

func TestHooksProblems(t *testing.T) {
	cases := []struct {
		name, hooks string
		want        []string // prefixes of every problem expected, in order
	}{
		{"slow without headers", "hooks:\n  slow: {}\n",
			[]string{`t.yaml:10: hooks.slow: needs headers, e.g. {X-Test-Delay: "{{.Ms}}"}`}},
		{"slow with empty headers", "hooks:\n  slow:\n    headers: {}\n",
			[]string{"t.yaml:11: hooks.slow: needs headers"}},
		{"unknown placeholder in slow", "hooks:\n  slow: {headers: {X-Test-Delay: \"{{.Msec}}\"}}\n",
			[]string{"t.yaml:10: hooks.slow.headers.X-Test-Delay: unknown placeholder {{.Msec}} (known: .Ref, .Key, .Tenant, .Ms); did you mean {{.Ms}}?"}},
		{"lifecycle placeholder in slow", "hooks:\n  slow: {headers: {X-Test-Delay: \"{{.Addr}}\"}}\n",
			[]string{"t.yaml:10: hooks.slow.headers.X-Test-Delay: unknown placeholder {{.Addr}}"}},
		{"unknown slow field", "hooks:\n  slow: {headers: {X-Test-Delay: \"{{.Ms}}\"}, delay: 5}\n",
			[]string{"t.yaml:10: hooks.slow.delay: unknown field (known: headers)"}},
		{"fail_next without path", "hooks:\n  fail_next: {method: POST}\n",
			[]string{"t.yaml:10: hooks.fail_next.path: missing required field"}},
		{"ms is not known in fail_next", "hooks:\n  fail_next: {path: /f, body: '{\"ms\": \"{{.Ms}}\"}'}\n",
			[]string{"t.yaml:10: hooks.fail_next.body: unknown placeholder {{.Ms}} (known: .Ref, .Key, .Tenant)"}},
		{"fail_next body not JSON", "hooks:\n  fail_next: {path: /f, body: 'status=503'}\n",
			[]string{"t.yaml:10: hooks.fail_next.body: not valid JSON"}},
		{"unknown hook", "hooks:\n  kill: {path: /k}\n",
			[]string{"t.yaml:10: hooks.kill: unknown field (known: fail_next, slow, hold_publish)"}},
		{"hooks not a mapping", "hooks: [fail_next]\n",
			[]string{"t.yaml:9: hooks: must be a mapping (key: value), got a list"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "instances: [http://127.0.0.1:1]\noperations:\n  - name: op\n    path: /v1/orders\n    body: '{}'\n" +
				"tenants:\n  - name: alice\n    headers: {Authorization: Bearer alice}\n" + c.hooks
			_, probs := parseString(src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}
