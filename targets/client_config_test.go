package targets

import (
	"slices"
	"strings"
	"testing"
)

// configuredClient is a client with an env, a policy and configurations; %EXTRA% is replaced by
// each test (more configurations).
const configuredClient = `clients:
  - name: sdk
    command: [./sdk, --url, "{{.URL}}"]
    env: {SDK_RETRIES: "4", SDK_STATE: "{{.State}}"}
    operations:
      - {name: charge, path: /v1/charges, identity: [$.ref]}
    retry:
      max_attempts: 5
      retries: [reset, timeout, 5xx, 429]
      backoff: {initial: 50ms, max: 1s, jitter: equal}
    configurations:
      - name: defaults
      - name: no-retries
        env: {SDK_RETRIES: "0", SDK_MODE: "strict-{{.Ref}}"}
        retry: {max_attempts: 1, transport_resends: 1, backoff: {jitter: none}}
%EXTRA%
`

// A configuration's env is merged over the client's and its retry block over the client's
// policy, field by field (the backoff's fields too); a client without configurations is tested
// in its own.
func TestClientConfigurations(t *testing.T) {
	tg, probs := parseString(strings.Replace(configuredClient, "%EXTRA%", "", 1), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	c := tg.Clients[0]
	cfgs := c.Configurations()
	if len(cfgs) != 2 || cfgs[0].Name != "defaults" || cfgs[1].Name != "no-retries" {
		t.Fatalf("configurations %v, want defaults and no-retries", cfgs)
	}
	if p := cfgs[0].Retry; p.MaxAttempts != 5 || p.Backoff != c.Retry.Backoff || !slices.Equal(p.Retries, c.Retry.Retries) {
		t.Errorf("defaults' policy %+v, want the client's %+v", p, c.Retry)
	}
	p := cfgs[1].Retry
	if p.MaxAttempts != 1 || p.TransportResends != 1 || p.Backoff.Jitter != JitterNone || p.Backoff.Initial != c.Retry.Backoff.Initial ||
		!slices.Equal(p.Retries, c.Retry.Retries) {
		t.Errorf("no-retries' policy %+v: want max_attempts 1, transport_resends 1, jitter none over the client's", p)
	}
	vars := ClientVars{URL: "http://127.0.0.1:9", State: "/s", Ref: "rs-x"}
	argv, env, err := c.Render(vars, cfgs[1])
	if err != nil || strings.Join(argv, " ") != "./sdk --url http://127.0.0.1:9" ||
		!slices.Equal(env, []string{"SDK_RETRIES=0", "SDK_STATE=/s", "SDK_MODE=strict-rs-x"}) {
		t.Errorf("render in no-retries = %q %q %v", argv, env, err)
	}
	if _, env, _ := c.Render(vars, nil); !slices.Equal(env, []string{"SDK_RETRIES=4", "SDK_STATE=/s"}) {
		t.Errorf("render in the client's own = %q", env)
	}
	devs := strings.Join(c.Deviations(), "\n")
	for _, d := range []string{"does not retry a 409", "in configuration no-retries: never retries",
		"in configuration no-retries: lets its transport re-send a request at once after a connection closed without an answer (up to 1"} {
		if !strings.Contains(devs, d) {
			t.Errorf("deviations %q do not say %q", devs, d)
		}
	}
	if strings.Contains(devs, "in configuration no-retries: does not retry a 409") {
		t.Errorf("deviations %q repeat the client's own for a configuration", devs)
	}

	plain, _ := parseString(strings.Replace(sdkClient, "%EXTRA%", "", 1), nil)
	own := plain.Clients[0].Configurations()
	if len(own) != 1 || own[0].Name != "" || own[0].Retry.MaxAttempts != plain.Clients[0].Retry.MaxAttempts || plain.Clients[0].Declared() != nil {
		t.Errorf("a client without configurations is tested in %v, want its own only", own)
	}
}

// A broken configuration is refused with its line.
func TestClientConfigurationProblems(t *testing.T) {
	cases := []struct {
		name, extra string
		want        []string
	}{
		{"a duplicate name", "      - name: defaults",
			[]string{`t.yaml:16: clients[0].configurations[2].name: duplicate configuration "defaults" (first on line 12)`}},
		{"no name", "      - env: {X: y}",
			[]string{"t.yaml:16: clients[0].configurations[2].name: missing required field"}},
		{"an unknown field", "      - {name: other, retries: 3}",
			[]string{"t.yaml:16: clients[0].configurations[2].retries: unknown field"}},
		{"a bad retry field", "      - {name: other, retry: {transport_resends: 99}}",
			[]string{"t.yaml:16: clients[0].configurations[2].retry.transport_resends: must be an integer from 0 to 10"}},
		{"a status both retried and never resent over the client's", "      - {name: other, retry: {never: [429]}}",
			[]string{"t.yaml:16: clients[0].configurations[2].retry.never: 429 is both retried and never resent"}},
		{"an unknown placeholder", "      - {name: other, env: {X: \"{{.Url}}\"}}",
			[]string{"t.yaml:16: clients[0].configurations[2].env.X: unknown placeholder {{.Url}}"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(strings.Replace(configuredClient, "%EXTRA%", c.extra, 1), nil)
			wantProblems(t, probs, c.want)
		})
	}
	_, probs := parseString("clients:\n  - name: c\n    configurations: []\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n", nil)
	wantProblems(t, probs, []string{"t.yaml:3: clients[0].configurations: declare at least one configuration"})
}

// The policy says which statuses it declares (retried or never resent) and which codes it lists.
func TestRetryPolicyDeclares(t *testing.T) {
	p := DefaultRetryPolicy()
	p.Retries = []string{"reset", "502", "503", "429", "408", "429"}
	for _, c := range []struct {
		status int
		want   bool
	}{{503, true}, {501, false}, {429, true}, {408, true}, {422, true}, {409, false}, {425, false}} {
		if got := p.Declares(c.status); got != c.want {
			t.Errorf("Declares(%d) = %v, want %v", c.status, got, c.want)
		}
	}
	if got := p.RetriedStatuses(); !slices.Equal(got, []int{502, 503, 429, 408}) {
		t.Errorf("RetriedStatuses() = %v, want [502 503 429 408]", got)
	}
}
