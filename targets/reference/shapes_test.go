package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// shapeBehaviours are the HTTP-level behaviours of the shape options (Config.KeyFormat,
// Auth, MismatchStatus; the hooks are in hooks_test.go), run on every store.
func shapeBehaviours() []apiBehaviour {
	return []apiBehaviour{
		{"KeyFormatUUID", apiOpts{keyFormat: KeyFormatUUID}, abKeyFormatUUID},
		{"AuthNoneTenantHeader", apiOpts{auth: AuthNone}, abAuthNone},
		{"AuthNoneObserver", apiOpts{auth: AuthNone}, abAuthNoneObserver},
		{"BearerIgnoresTenantHeader", apiOpts{}, abBearerIgnoresTenantHeader},
		{"MismatchStatus400", apiOpts{mismatchStatus: http.StatusBadRequest}, abMismatchStatus},
	}
}

// TestShapeBehaviours runs the shape table on every store, each behaviour on a fresh store.
func TestShapeBehaviours(t *testing.T) {
	for _, store := range AllStores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			for _, b := range append(shapeBehaviours(), hookBehaviours()...) {
				t.Run(b.name, func(t *testing.T) {
					b.run(t, newAPIHarness(t, store, b.opts))
				})
			}
		})
	}
}

// wantDetail checks that a problem's detail mentions want.
func wantDetail(t *testing.T, r apiResp, want string) {
	t.Helper()
	var p struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(r.body, &p) != nil || !strings.Contains(p.Detail, want) {
		t.Fatalf("answer %s: want a problem detail that mentions %q", r, want)
	}
}

func abKeyFormatUUID(t *testing.T, h *apiHarness) {
	const uuid = "8e03978e-40d5-43e8-bc93-6894a57f9324"
	body := orderJSON("ref-kf", 100, "EUR")
	for _, key := range []string{
		"not-a-uuid",
		"8e03978e40d543e8bc936894a57f9324",           // no hyphens
		"urn:uuid:" + uuid,                           // a URN
		"{" + uuid + "}",                             // braces
		uuid + "0",                                   // 37 characters
		uuid[:35],                                    // 35 characters
		"8e03978e-40d5-43e8-bc93-6894a57f932g",       // not hexadecimal
		"8e03978e-40d543e8--bc93-6894a57f9324",       // a hyphen out of place
		`" ` + uuid + `"`,                            // white space inside the string
		"8e03978e-40d5-43e8-bc93-6894a57f9324\u00e9", // a letter too many
	} {
		r := h.post(ordersPath, "alice", key, body)
		wantStatus(t, r, http.StatusBadRequest)
		wantDetail(t, r, "UUID")
	}
	// The usual key checks still come first.
	wantDetail(t, h.post(ordersPath, "alice", `""`, body), "empty")
	h.wantCount("alice", ordersPath, "ref-kf", 0)
	// A UUID in either form is accepted, of any version; the key is still compared verbatim.
	first := h.post(ordersPath, "alice", uuid, body)
	wantNew(t, first)
	wantReplay(t, h.post(ordersPath, "alice", `"`+uuid+`"`, body), first)
	wantStatus(t, h.post(ordersPath, "alice", uuid, orderJSON("ref-kf", 1, "EUR")), http.StatusUnprocessableEntity)
	wantNew(t, h.post(ordersPath, "alice", strings.ToUpper(uuid), body))
	wantNew(t, h.post(ordersPath, "alice", "00000000-0000-0000-0000-000000000000", body))
	wantNew(t, h.post(ordersPath, "alice", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", body)) // version 7
	h.wantCount("alice", ordersPath, "ref-kf", 4)
}

func abAuthNone(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-none", 1250, "EUR")
	a := h.post(ordersPath, "alice", "none-1", body)
	stored := wantNew(t, a)
	wantReplay(t, h.post(ordersPath, "alice", "none-1", body), a)
	// Keys stay scoped per tenant.
	b := h.post(ordersPath, "bob", "none-1", body)
	if wantNew(t, b).ID == stored.ID {
		t.Fatalf("bob got alice's order %s", b.body)
	}
	for _, c := range []struct {
		name    string
		headers map[string][]string
		detail  string
	}{
		{"no X-Tenant", nil, "X-Tenant header is required"},
		{"empty X-Tenant", map[string][]string{TenantHeader: {""}}, "X-Tenant header is required"},
		{"blank X-Tenant", map[string][]string{TenantHeader: {"  "}}, "X-Tenant header is required"},
		{"unknown tenant", map[string][]string{TenantHeader: {"mallory"}}, "unknown tenant"},
		{"tenant in another case", map[string][]string{TenantHeader: {"Alice"}}, "unknown tenant"},
		{"two X-Tenant", map[string][]string{TenantHeader: {"alice", "bob"}}, "sent once"},
		{"a bearer token is no tenant", map[string][]string{"Authorization": {"Bearer alice"}}, "X-Tenant header is required"},
	} {
		req := h.newPost(ordersPath, "", "none-1", body)
		for k, v := range c.headers {
			req.Header[k] = v
		}
		r := h.do(req)
		wantStatus(t, r, http.StatusBadRequest)
		wantDetail(t, r, c.detail)
		if bytes.Contains(r.body, []byte(stored.ID)) {
			t.Fatalf("%s: received alice's stored response: %s", c.name, r)
		}
	}
	// The tenant comes before validation, and a failed request stores nothing.
	wantDetail(t, h.post(ordersPath, "", noKey, "{"), "X-Tenant")
	wantStatus(t, h.post(ordersPath, "", "none-2", body), http.StatusBadRequest)
	wantNew(t, h.post(ordersPath, "alice", "none-2", body))
	h.wantCount("alice", ordersPath, "ref-none", 2)
	h.wantCount("bob", ordersPath, "ref-none", 1)
}

func abAuthNoneObserver(t *testing.T, h *apiHarness) {
	wantNew(t, h.post(refundsPath, "bob", "obs-1", orderJSON("ref-obs", 1, "EUR")))
	h.wantCount("bob", refundsPath, "ref-obs", 1)
	h.wantCount("alice", refundsPath, "ref-obs", 0)
	for _, c := range []struct {
		header, value string
	}{{"", ""}, {TenantHeader, "mallory"}, {TenantHeader, ""}, {"Authorization", "Bearer bob"}} {
		req, err := http.NewRequest(http.MethodGet, h.url+refundsPath+"?ref=ref-obs", nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.header != "" {
			req.Header.Set(c.header, c.value)
		}
		r := h.do(req)
		wantStatus(t, r, http.StatusBadRequest)
		wantDetail(t, r, TenantHeader)
	}
}

func abBearerIgnoresTenantHeader(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-bearer", 1, "EUR")
	req := h.newPost(ordersPath, "", "bearer-1", body)
	req.Header.Set(TenantHeader, "alice")
	wantStatus(t, h.do(req), http.StatusUnauthorized)
	req = h.newPost(ordersPath, "bob", "bearer-1", body)
	req.Header.Set(TenantHeader, "alice") // the token decides, not the header
	wantNew(t, h.do(req))
	h.wantCount("bob", ordersPath, "ref-bearer", 1)
	h.wantCount("alice", ordersPath, "ref-bearer", 0)
}

func abMismatchStatus(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-mm400", 1250, "EUR")
	first := h.post(ordersPath, "alice", "mm400", body)
	wantNew(t, first)
	for _, variant := range []string{orderJSON("ref-mm400", 9999, "EUR"), orderJSON("ref-mm400", 1250, "USD")} {
		r := h.post(ordersPath, "alice", "mm400", variant)
		wantStatus(t, r, http.StatusBadRequest)
		wantDetail(t, r, "different payload")
	}
	wantReplay(t, h.post(ordersPath, "alice", "mm400", body), first)
	// Validation errors keep their 400 and their own detail.
	wantDetail(t, h.post(ordersPath, "alice", "mm400-bad", `{"ref":"ref-mm400"}`), "missing field")
	h.wantCount("alice", ordersPath, "ref-mm400", 1)
}

// TestShapeConfig: NewAPI fills in the defaults of the shape options and refuses values
// it does not know, naming them.
func TestShapeConfig(t *testing.T) {
	base := Config{Store: NewMemoryStore(), Tenants: []string{"alice"}}
	a, err := NewAPI(base)
	if err != nil {
		t.Fatal(err)
	}
	if a.cfg.KeyFormat != KeyFormatAny || a.cfg.Auth != AuthBearer || a.cfg.Hooks || a.cfg.MismatchStatus != http.StatusUnprocessableEntity {
		t.Errorf("defaults = %q, %q, hooks %v, mismatch %d; want any, bearer, false, 422",
			a.cfg.KeyFormat, a.cfg.Auth, a.cfg.Hooks, a.cfg.MismatchStatus)
	}
	for _, c := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"key format", func(c *Config) { c.KeyFormat = "UUID" }, `unknown key format "UUID" (known: any, uuid)`},
		{"auth", func(c *Config) { c.Auth = "basic" }, `unknown auth mode "basic" (known: bearer, none)`},
		{"mismatch 2xx", func(c *Config) { c.MismatchStatus = 200 }, "mismatch status 200 is not a client error"},
		{"mismatch 5xx", func(c *Config) { c.MismatchStatus = 500 }, "mismatch status 500"},
		{"mismatch negative", func(c *Config) { c.MismatchStatus = -1 }, "mismatch status -1"},
	} {
		cfg := base
		c.set(&cfg)
		if _, err := NewAPI(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewAPI = %v, want an error with %q", c.name, err, c.want)
		}
	}
	for _, status := range []int{400, 409, 422, 499} {
		cfg := base
		cfg.MismatchStatus = status
		if _, err := NewAPI(cfg); err != nil {
			t.Errorf("mismatch status %d: %v", status, err)
		}
	}
}

func TestIsCanonicalUUID(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"8e03978e-40d5-43e8-bc93-6894a57f9324", true},
		{"8E03978E-40D5-43E8-BC93-6894A57F9324", true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"ffffffff-ffff-ffff-ffff-ffffffffffff", true},
		{"", false},
		{"8e03978e-40d5-43e8-bc93-6894a57f932", false},
		{"8e03978e-40d5-43e8-bc93_6894a57f9324", false},
		{"8e03978e-40d5-43e8-bc9306894a57f9324-", false},
		{"+e03978e-40d5-43e8-bc93-6894a57f9324", false},
		{"8e03978e-40d5-43e8-bc93-6894a57f932Z", false},
	} {
		if got := isCanonicalUUID(c.s); got != c.want {
			t.Errorf("isCanonicalUUID(%q) = %v, want %v", c.s, got, c.want)
		}
	}
	for i := range 100 {
		if s := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", i, i, i, i, i); !isCanonicalUUID(s) {
			t.Errorf("isCanonicalUUID(%q) = false", s)
		}
	}
}
