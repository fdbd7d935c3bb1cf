package targets

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const holdHooks = `hooks:
  hold_publish:
    hold: {path: /_test/hold-publish}
    held: {path: /_test/hold-publish, jsonpath: $.held}
    release: {method: DELETE, path: /_test/hold-publish}
`

// hold_publish decodes hold (POST by default), held (GET) and release (DELETE by default);
// release may be left out; hold and held may not, each missing one is a located problem.
func TestHoldPublishParse(t *testing.T) {
	h := hooksTarget(t, "http://127.0.0.1:1", holdHooks).Hooks
	if !h.CanHoldPublish() || h.CanFail() || h.CanSlow() {
		t.Fatalf("CanHoldPublish %v, CanFail %v, CanSlow %v", h.CanHoldPublish(), h.CanFail(), h.CanSlow())
	}
	hp := h.HoldPublish
	if hp.Hold.Method != "POST" || hp.Hold.Path != "/_test/hold-publish" || hp.Held.Method != "GET" || hp.Held.JSONPath != "$.held" ||
		hp.Release == nil || hp.Release.Method != "DELETE" {
		t.Errorf("hold %+v, held %+v, release %+v", hp.Hold, hp.Held, hp.Release)
	}
	noRelease := "hooks:\n  hold_publish:\n    hold: {path: /h}\n    held: {path: /h, jsonpath: $.n}\n"
	if h := hooksTarget(t, "http://127.0.0.1:1", noRelease).Hooks; !h.CanHoldPublish() || h.HoldPublish.Release != nil {
		t.Errorf("without release: %+v", h.HoldPublish)
	}
	var none *Hooks
	if none.CanHoldPublish() {
		t.Error("a nil *Hooks can hold publications")
	}

	base := "instances: [http://127.0.0.1:1]\noperations:\n  - name: op\n    path: /v1/orders\n"
	cases := []struct {
		name, hooks string
		want        []string
	}{
		{"no held", "hooks:\n  hold_publish:\n    hold: {path: /h}\n", []string{"t.yaml:7: hooks.hold_publish.held: missing required field"}},
		{"no hold", "hooks:\n  hold_publish:\n    held: {path: /h, jsonpath: $.n}\n", []string{"t.yaml:7: hooks.hold_publish.hold: missing required field"}},
		{"held without a jsonpath", "hooks:\n  hold_publish:\n    hold: {path: /h}\n    held: {path: /h}\n",
			[]string{"t.yaml:8: hooks.hold_publish.held.jsonpath: missing required field (such as $.held)"}},
		{"an operation's placeholder", "hooks:\n  hold_publish:\n    hold: {path: \"/h/{{.Ref}}\"}\n    held: {path: /h, jsonpath: $.n}\n",
			[]string{"t.yaml:7: hooks.hold_publish.hold.path: unknown placeholder {{.Ref}} (known: .Tenant)"}},
		{"an unknown field", "hooks:\n  hold_publish:\n    hold: {path: /h}\n    held: {path: /h, jsonpath: $.n}\n    count: 1\n",
			[]string{"t.yaml:9: hooks.hold_publish.count: unknown field (known: hold, held, release)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(base+c.hooks, nil)
			wantProblems(t, probs, c.want)
		})
	}
}

// The hold, held and release requests reach the instance as declared, with the tenant's
// headers; held reads the number; a non-2xx is an error naming the hook.
func TestHoldPublishRequests(t *testing.T) {
	var mu sync.Mutex
	var got []string
	held := `{"held": 2}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Tenant"))
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.Method {
		case http.MethodGet:
			_, _ = io.WriteString(w, held)
		case http.MethodDelete:
			w.WriteHeader(http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	tg := hooksTarget(t, srv.URL, holdHooks)
	hc, in, tn := tg.ObserverClient(0, 0), &tg.Instances[0], tg.Tenants[0]
	ctx := context.Background()
	if err := tg.SendHoldPublish(ctx, hc, in, tn); err != nil {
		t.Fatalf("hold: %v", err)
	}
	if n, err := tg.HeldPublications(ctx, hc, in, tn); n != 2 || err != nil {
		t.Errorf("held = %d, %v; want 2", n, err)
	}
	if err := tg.SendReleasePublish(ctx, hc, in, tn); err == nil || !strings.Contains(err.Error(), "hooks.hold_publish.release: DELETE /_test/hold-publish answered 404") {
		t.Errorf("release error = %v", err)
	}
	want := []string{"POST /_test/hold-publish alice", "GET /_test/hold-publish alice", "DELETE /_test/hold-publish alice"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q, want %q", got, want)
	}
	held = `{"held": "x"}`
	if _, err := tg.HeldPublications(ctx, hc, in, tn); err == nil || !strings.HasPrefix(err.Error(), "hooks.hold_publish.held: ") {
		t.Errorf("held of a string: %v", err)
	}
}
