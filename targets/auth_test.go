package targets

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// authTarget parses a one-operation target sent to base, with the given tenants block and extra
// top-level lines.
func authTarget(t *testing.T, base, tenants, extra string) *Target {
	t.Helper()
	src := "instances: [" + base + "]\noperations:\n  - name: op\n    path: /v1/orders\n    body: '{\"ref\": \"{{.Ref}}\"}'\n" +
		tenants + extra
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatalf("parse:\n%s\n%s", src, strings.Join(probs, "\n"))
	}
	return tg
}

// headerServer answers 200 to every request and hands the headers it received to the test.
func headerServer(t *testing.T) (*httptest.Server, <-chan http.Header) {
	t.Helper()
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// sentHeaders builds the operation's request as tn, sends it to the target's first instance and
// returns the headers the server received.
func sentHeaders(t *testing.T, tg *Target, tn *Tenant, got <-chan http.Header) http.Header {
	t.Helper()
	req, _, err := tg.Operations[0].Build(BuildInput{Instance: &tg.Instances[0], Tenant: tn, Vars: Vars{Ref: "r-1", Key: "k-1"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return <-got
}

// wantSent checks that h carries each header of want with its value, and none of absent.
func wantSent(t *testing.T, h http.Header, want map[string]string, absent []string) {
	t.Helper()
	for name, want := range want {
		if got := h.Get(name); got != want {
			t.Errorf("%s sent as %q, want %q", name, got, want)
		}
	}
	for _, name := range absent {
		if v, ok := h[http.CanonicalHeaderKey(name)]; ok {
			t.Errorf("%s sent as %q, want it absent", name, v)
		}
	}
}

func TestAuthParse(t *testing.T) {
	cases := []struct {
		name, src   string
		auth        AuthMode
		identity    [][]string // per tenant
		credentials [][]string // per tenant, in file order
		secret      []string   // SecretHeaders
		skip        string     // what CredentialSpecsSkip contains; "" = the specs apply
	}{
		{"legacy headers are credentials", "tenants:\n  - name: a\n    headers: {Authorization: Bearer aaaaaaaaaa}\n",
			AuthBearer, [][]string{nil}, [][]string{{"Authorization"}}, []string{"Authorization"}, ""},
		{"explicit bearer", "auth: bearer\ntenants:\n  - name: a\n    credentials: {Authorization: Bearer aaaaaaaaaa}\n",
			AuthBearer, [][]string{nil}, [][]string{{"Authorization"}}, []string{"Authorization"}, ""},
		{"header auth with identity", "auth: header\ntenants:\n  - name: a\n    identity: {X-Tenant: a}\n    credentials: {X-Api-Key: sk-a-0123456}\n" +
			"  - name: b\n    identity: {X-Tenant: b}\n    credentials: {X-Api-Key: sk-b-0123456}\n",
			AuthHeader, [][]string{{"X-Tenant"}, {"X-Tenant"}}, [][]string{{"X-Api-Key"}, {"X-Api-Key"}}, []string{"X-Api-Key", "X-Api-Key"}, ""},
		{"headers and credentials together", "tenants:\n  - name: a\n    headers: {Authorization: Bearer aaaaaaaaaa}\n    credentials: {X-Api-Key: k, X-Sig: s}\n",
			AuthBearer, [][]string{nil}, [][]string{{"Authorization", "X-Api-Key", "X-Sig"}}, []string{"Authorization", "X-Api-Key", "X-Sig"}, ""},
		{"auth none", "auth: none\ntenants:\n  - name: a\n    identity: {X-Tenant: a, X-Org: o}\n",
			AuthNone, [][]string{{"X-Tenant", "X-Org"}}, [][]string{nil}, nil, "auth: none"},
		{"auth none with spaces", "auth: ' none '\ntenants:\n  - name: a\n    identity: {X-Tenant: a}\n",
			AuthNone, [][]string{{"X-Tenant"}}, [][]string{nil}, nil, "auth: none"},
		{"identity alone under bearer", "tenants:\n  - name: a\n    identity: {X-Tenant: a}\n",
			AuthBearer, [][]string{{"X-Tenant"}}, [][]string{nil}, nil, "no tenant declares credentials"},
		{"no tenants", "", AuthBearer, nil, nil, nil, "no tenant declares credentials"},
		{"one tenant of two with credentials", "tenants:\n  - name: a\n    identity: {X-Tenant: a}\n  - name: b\n    headers: {X-Api-Key: kb}\n",
			AuthBearer, [][]string{{"X-Tenant"}, nil}, [][]string{nil, {"X-Api-Key"}}, []string{"X-Api-Key"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := authTarget(t, "http://127.0.0.1:1", c.src, "")
			if tg.Auth != c.auth {
				t.Errorf("Auth = %q, want %q", tg.Auth, c.auth)
			}
			if len(tg.Tenants) != len(c.identity) {
				t.Fatalf("%d tenants, want %d", len(tg.Tenants), len(c.identity))
			}
			for i, tn := range tg.Tenants {
				if !slices.Equal(tn.Identity, c.identity[i]) {
					t.Errorf("tenant %s: Identity = %v, want %v", tn.Name, tn.Identity, c.identity[i])
				}
				if got := tn.Credentials(); !slices.Equal(got, c.credentials[i]) {
					t.Errorf("tenant %s: Credentials() = %v, want %v", tn.Name, got, c.credentials[i])
				}
				if got, want := len(tn.Headers), len(c.identity[i])+len(c.credentials[i]); got != want {
					t.Errorf("tenant %s: %d headers %v, want %d", tn.Name, got, tn.Headers, want)
				}
			}
			if got := tg.SecretHeaders(); !slices.Equal(got, c.secret) {
				t.Errorf("SecretHeaders() = %v, want %v", got, c.secret)
			}
			got := tg.CredentialSpecsSkip()
			if (got == "") != (c.skip == "") || !strings.Contains(got, c.skip) {
				t.Errorf("CredentialSpecsSkip() = %q, want %q", got, c.skip)
			}
		})
	}
}

func TestAuthProblems(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // prefixes of the problems expected, in order
	}{
		{"unknown auth", "auth: basic\n",
			[]string{`t.yaml:6: auth: must be bearer, header or none, got "basic"`}},
		{"auth none with credentials", "auth: none\ntenants:\n  - name: a\n    identity: {X-Tenant: a}\n    credentials: {X-Api-Key: k}\n",
			[]string{"t.yaml:7: tenants[0]: auth: none, but tenant a sends credentials (X-Api-Key): put the headers that only name the tenant under identity"}},
		{"auth none with legacy headers", "auth: none\ntenants:\n  - name: a\n    identity: {X-Tenant: a}\n  - name: b\n    headers: {Authorization: Bearer b, X-Api-Key: k}\n",
			[]string{"t.yaml:7: tenants[1]: auth: none, but tenant b sends credentials (Authorization, X-Api-Key)"}},
		{"header in identity and credentials", "tenants:\n  - name: a\n    identity: {X-Tenant: a}\n    credentials:\n      X-Tenant: b\n",
			[]string{"t.yaml:10: tenants[0].credentials.X-Tenant: header X-Tenant is declared twice for this tenant"}},
		{"header in identity and headers", "tenants:\n  - name: a\n    identity: {Authorization: a}\n    headers: {Authorization: Bearer a}\n",
			[]string{"t.yaml:9: tenants[0].headers.Authorization: header Authorization is declared twice for this tenant"}},
		{"header in headers and credentials", "tenants:\n  - name: a\n    headers: {X-Api-Key: a}\n    credentials: {X-Api-Key: b}\n",
			[]string{"t.yaml:9: tenants[0].credentials.X-Api-Key: header X-Api-Key is declared twice for this tenant"}},
		{"header twice in another case", "tenants:\n  - name: a\n    identity: {X-Tenant: a}\n    credentials: {x-tenant: b}\n",
			[]string{"t.yaml:9: tenants[0].credentials.x-tenant: header x-tenant is declared twice for this tenant"}},
		{"unknown tenant field", "tenants:\n  - name: a\n    identities: {X-Tenant: a}\n",
			[]string{"t.yaml:8: tenants[0].identities: unknown field"}},
		{"identity not a mapping", "tenants:\n  - name: a\n    identity: [X-Tenant]\n",
			[]string{"t.yaml:8: tenants[0].identity: must be a mapping of header names to values, got a list"}},
		{"unknown_credentials not a mapping", "unknown_credentials: [nobody]\n",
			[]string{"t.yaml:6: unknown_credentials: must be a mapping of header names to values, got a list"}},
		{"unknown_credentials bad header name", "unknown_credentials: {\"Bad Name\": x}\n",
			[]string{`t.yaml:6: unknown_credentials.Bad Name: "Bad Name" is not a valid HTTP header name`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "instances: [http://127.0.0.1:1]\noperations:\n  - name: op\n    path: /v1/orders\n    body: '{}'\n" + c.src
			_, probs := parseString(src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}

func TestObserverPerTenant(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{"", true},
		{", per_tenant: true", true},
		{", per_tenant: false", false},
		{", per_tenant: 'False'", false},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			tg, probs := parseString(minimal+"    observer: {http: {path: /count, jsonpath: $.n}"+c.line+"}\n", nil)
			if probs != nil {
				t.Fatal(probs)
			}
			if got := tg.Operations[0].Observer.PerTenant(); got != c.want {
				t.Errorf("PerTenant() = %v, want %v", got, c.want)
			}
		})
	}
	if _, probs := parseString(minimal+"    observer: {http: {path: /c, jsonpath: $.n}, per_tenant: sometimes}\n", nil); len(probs) != 1 ||
		!strings.HasPrefix(probs[0], `t.yaml:5: operations[0].observer.per_tenant: must be true or false, got "sometimes"`) {
		t.Errorf("per_tenant: sometimes: %v", probs)
	}
}

func TestWithUnknownCredentialsSendsTheSameHeadersWithWrongCredentials(t *testing.T) {
	u := UnknownCredential
	cases := []struct {
		name    string
		tenant  string            // one tenant's YAML
		want    map[string]string // headers the unknown caller sends (the tenant's header names)
		private []string          // values of the tenant that must not be sent
	}{
		{"bearer", "    headers: {Authorization: Bearer alice-token-0123}\n",
			map[string]string{"Authorization": "Bearer " + u}, []string{"alice-token-0123"}},
		{"basic", "    credentials: {Authorization: 'Basic YWxpY2U6cHc='}\n",
			map[string]string{"Authorization": "Basic " + u}, []string{"YWxpY2U6cHc="}},
		{"api key without a scheme", "    credentials: {X-Api-Key: sk_live_alice}\n",
			map[string]string{"X-Api-Key": u}, []string{"sk_live_alice"}},
		{"cookie", "    credentials: {Cookie: 'session=alice-s3ss; theme=dark'}\n",
			map[string]string{"Cookie": u}, []string{"alice-s3ss", "session=alice-s3ss"}},
		{"identity kept, credentials replaced", "    identity: {X-Tenant: alice, X-Org: acme}\n    credentials: {X-Api-Key: sk-alice, Authorization: Bearer alice-0123456}\n",
			map[string]string{"X-Tenant": "alice", "X-Org": "acme", "X-Api-Key": u, "Authorization": "Bearer " + u}, []string{"sk-alice", "alice-0123456"}},
		{"identity alone", "    identity: {X-Tenant: alice}\n",
			map[string]string{"X-Tenant": "alice"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := headerServer(t)
			tg := authTarget(t, srv.URL, "tenants:\n  - name: alice\n"+c.tenant, "")
			tn := tg.Tenants[0]
			before := map[string]string{}
			for k, v := range tn.Headers {
				before[k] = v
			}
			bad := tn.WithUnknownCredentials()
			if bad.Name != "unknown" {
				t.Errorf("Name = %q, want unknown", bad.Name)
			}
			if !slices.Equal(bad.order, tn.order) || !slices.Equal(bad.Credentials(), tn.Credentials()) || !slices.Equal(bad.Identity, tn.Identity) {
				t.Errorf("order %v, credentials %v, identity %v; want %v, %v, %v",
					bad.order, bad.Credentials(), bad.Identity, tn.order, tn.Credentials(), tn.Identity)
			}
			h := sentHeaders(t, tg, bad, got)
			for name, want := range c.want {
				if got := h.Values(name); len(got) != 1 || got[0] != want {
					t.Errorf("%s sent as %q, want %q", name, got, want)
				}
			}
			for _, secret := range c.private {
				for name, vs := range h {
					if strings.Contains(strings.Join(vs, ","), secret) {
						t.Errorf("%s: %q carries the tenant's credential %q", name, vs, secret)
					}
				}
			}
			for k, v := range before {
				if tn.Headers[k] != v {
					t.Errorf("the tenant itself changed: %s = %q, was %q", k, tn.Headers[k], v)
				}
			}
		})
	}
}

func TestWithoutCredentialsSendsIdentityAlone(t *testing.T) {
	cases := []struct {
		name, tenant string
		want         map[string]string // headers sent; the others of the tenant must be absent
		absent       []string
	}{
		{"bearer", "    headers: {Authorization: Bearer alice-0123456}\n", map[string]string{}, []string{"Authorization"}},
		{"identity and credentials", "    identity: {X-Tenant: alice}\n    credentials: {X-Api-Key: sk-alice}\n    headers: {Authorization: Bearer a}\n",
			map[string]string{"X-Tenant": "alice"}, []string{"X-Api-Key", "Authorization"}},
		{"identity alone", "    identity: {X-Tenant: alice, X-Org: acme}\n", map[string]string{"X-Tenant": "alice", "X-Org": "acme"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := headerServer(t)
			tg := authTarget(t, srv.URL, "tenants:\n  - name: alice\n"+c.tenant, "")
			tn := tg.Tenants[0]
			bare := tn.WithoutCredentials()
			if bare.Name != "anonymous" || len(bare.Credentials()) != 0 || !slices.Equal(bare.order, tn.Identity) {
				t.Errorf("WithoutCredentials() = %+v (order %v), want anonymous with the identity headers %v alone", bare, bare.order, tn.Identity)
			}
			h := sentHeaders(t, tg, bare, got)
			wantSent(t, h, c.want, c.absent)
			if len(tn.Credentials()) == 0 && len(c.absent) > 0 {
				t.Errorf("the tenant itself lost its credentials")
			}
		})
	}
}

func TestUnknownCaller(t *testing.T) {
	u := UnknownCredential
	tenant := "tenants:\n  - name: alice\n    identity: {X-Tenant: alice}\n    credentials: {X-Api-Key: sk-alice-0123}\n"
	cases := []struct {
		name, extra string
		want        map[string]string
		absent      []string
		order       []string
	}{
		{"derived from the tenant", "", map[string]string{"X-Tenant": "alice", "X-Api-Key": u}, nil, []string{"X-Tenant", "X-Api-Key"}},
		{"declared for the same header", "unknown_credentials: {X-Api-Key: sk-nobody}\n",
			map[string]string{"X-Tenant": "alice", "X-Api-Key": "sk-nobody"}, nil, []string{"X-Tenant", "X-Api-Key"}},
		{"declared for other headers", "unknown_credentials: {X-Sig: bad-sig, Authorization: Bearer nobody-0000}\n",
			map[string]string{"X-Tenant": "alice", "Authorization": "Bearer nobody-0000", "X-Sig": "bad-sig"}, []string{"X-Api-Key"},
			[]string{"X-Tenant", "Authorization", "X-Sig"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := headerServer(t)
			tg := authTarget(t, srv.URL, tenant, c.extra)
			bad := tg.UnknownCaller(tg.Tenants[0])
			if bad.Name != "unknown" || !slices.Equal(bad.order, c.order) || !slices.Equal(bad.Identity, []string{"X-Tenant"}) {
				t.Errorf("UnknownCaller = %q with order %v, identity %v; want unknown, %v, [X-Tenant]", bad.Name, bad.order, bad.Identity, c.order)
			}
			h := sentHeaders(t, tg, bad, got)
			wantSent(t, h, c.want, c.absent)
			if got := tg.Tenants[0].Headers["X-Api-Key"]; got != "sk-alice-0123" {
				t.Errorf("the tenant's own credential became %q", got)
			}
		})
	}
}

func TestSecretAndPublicValues(t *testing.T) {
	cases := []struct {
		name, src string
		secret    []string // must be in SecretValues
		notSecret []string // must not be
		public    []string // PublicValues, exactly
	}{
		{"bearer token named after the tenant", "tenants:\n  - name: alice\n    headers: {Authorization: Bearer alice}\n",
			[]string{"Bearer alice"}, []string{"alice"}, []string{"alice"}},
		{"long bearer token", "tenants:\n  - name: alice\n    headers: {Authorization: Bearer sk_test_0123456789}\n",
			[]string{"Bearer sk_test_0123456789", "sk_test_0123456789"}, nil, []string{"alice"}},
		{"bearer token of 8", "tenants:\n  - name: a\n    credentials: {Authorization: Bearer abcdefgh}\n",
			[]string{"Bearer abcdefgh", "abcdefgh"}, nil, []string{"a"}},
		{"bearer token of 7", "tenants:\n  - name: a\n    credentials: {Authorization: Bearer abcdefg}\n",
			[]string{"Bearer abcdefg"}, []string{"abcdefg"}, []string{"a"}},
		{"bearer token of 7 after two spaces", "tenants:\n  - name: a\n    credentials: {Authorization: 'Bearer  abcdefg'}\n",
			[]string{"Bearer  abcdefg"}, []string{"abcdefg", " abcdefg"}, []string{"a"}},
		{"token that is another tenant's long name", "tenants:\n  - name: alice-the-first\n    headers: {Authorization: Bearer bob-the-builder}\n" +
			"  - name: bob-the-builder\n    headers: {Authorization: Bearer alice-the-first}\n",
			[]string{"Bearer bob-the-builder", "Bearer alice-the-first"}, []string{"bob-the-builder", "alice-the-first"},
			[]string{"alice-the-first", "bob-the-builder"}},
		{"identity values are public", "auth: header\ntenants:\n  - name: alice\n    identity: {X-Tenant: tenant-alice-0001, X-Org: acme-corporation}\n" +
			"    credentials: {X-Api-Key: sk-alice-secret}\n",
			[]string{"sk-alice-secret"}, []string{"tenant-alice-0001", "acme-corporation"}, []string{"alice", "tenant-alice-0001", "acme-corporation"}},
		{"token equal to an identity value", "tenants:\n  - name: alice\n    identity: {X-Tenant: tenant-alice-0001}\n" +
			"    credentials: {Authorization: Bearer tenant-alice-0001}\n",
			[]string{"Bearer tenant-alice-0001"}, []string{"tenant-alice-0001"}, []string{"alice", "tenant-alice-0001"}},
		{"cookie has no scheme", "tenants:\n  - name: a\n    credentials: {Cookie: 'session=abcdefgh1234; theme=dark'}\n",
			[]string{"session=abcdefgh1234; theme=dark"}, []string{"theme=dark"}, []string{"a"}},
		{"tenant and top-level secrets", "tenants:\n  - name: a\n    identity: {X-Tenant: t-a}\n    secrets: [tenant-extra]\nsecrets: [top-extra]\n",
			[]string{"tenant-extra", "top-extra"}, []string{"a", "t-a"}, []string{"a", "t-a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := authTarget(t, "http://127.0.0.1:1", c.src, "")
			got := tg.SecretValues()
			for _, s := range c.secret {
				if !slices.Contains(got, s) {
					t.Errorf("SecretValues() = %q lacks %q", got, s)
				}
			}
			for _, s := range c.notSecret {
				if slices.Contains(got, s) {
					t.Errorf("SecretValues() = %q holds %q", got, s)
				}
			}
			for i := 1; i < len(got); i++ {
				if len(got[i]) > len(got[i-1]) || slices.Contains(got[:i], got[i]) {
					t.Errorf("SecretValues() = %q: want longest first, without duplicates", got)
				}
			}
			if pub := tg.PublicValues(); !slices.Equal(pub, c.public) {
				t.Errorf("PublicValues() = %q, want %q", pub, c.public)
			}
		})
	}
}
