package targets

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// conditional is a policy that retries a 429 only when its error code is lock_timeout, a 503 only
// when its error is marked transient, every other 5xx, and obeys Stripe-Should-Retry.
const conditional = `    retry:
      retries: [reset, {status: 429, when: {jsonpath: $.error.code, equals: lock_timeout}}, 5xx, 409,
                {status: 503, when: {jsonpath: "$['error']['transient']", equals: "true"}}]
      should_retry_header: {name: Stripe-Should-Retry, retry: "true", never: "false"}`

// A conditional entry makes its status retried only when the answer meets it (neither retried
// nor never resent otherwise); the should-retry header decides over everything, never and the
// statuses included; a header with another value decides nothing.
func TestRetryPolicyDecide(t *testing.T) {
	tg, probs := parseString(strings.Replace(sdkClient, "%EXTRA%", conditional, 1), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	p := tg.Clients[0].Retry
	hdr := func(v string) http.Header { return http.Header{"Stripe-Should-Retry": {v}} }
	cases := []struct {
		name   string
		status int
		h      http.Header
		body   string
		want   RetryDecision
	}{
		{"a 429 whose code is lock_timeout", 429, nil, `{"error": {"code": "lock_timeout"}}`, DecideRetry},
		{"a 429 with another code", 429, nil, `{"error": {"code": "rate_limit"}}`, DecideUndeclared},
		{"a 429 with no code", 429, nil, `{"error": "busy"}`, DecideUndeclared},
		{"a 429 whose body is not JSON", 429, nil, `busy`, DecideUndeclared},
		{"a 503 marked transient (a boolean)", 503, nil, `{"error": {"transient": true}}`, DecideRetry},
		{"a 503 not marked: the class does not cover it", 503, nil, `{"error": {}}`, DecideUndeclared},
		{"a 502: the class", 502, nil, `{}`, DecideRetry},
		{"a 409 listed", 409, nil, `{}`, DecideRetry},
		{"a 400 never resent", 400, nil, `{}`, DecideNever},
		{"a 408 not declared", 408, nil, `{}`, DecideUndeclared},
		{"a 502 the header says never", 502, hdr("false"), `{}`, DecideNever},
		{"a 400 the header says retry", 400, hdr("TRUE"), `{}`, DecideRetry},
		{"a 429 with another code the header says retry", 429, hdr("true"), `{"error": {"code": "rate_limit"}}`, DecideRetry},
		{"a header with another value decides nothing", 400, hdr("maybe"), `{}`, DecideNever},
	}
	for _, c := range cases {
		if got := p.Decide(c.status, c.h, []byte(c.body)); got != c.want {
			t.Errorf("%s: Decide = %d, want %d", c.name, got, c.want)
		}
	}
	if !p.Declares(429) || p.RetriesStatus(429) || p.RetriesStatus(503) || !p.RetriesStatus(502) {
		t.Errorf("429 and 503 conditional, 502 retried: Declares(429) %v, RetriesStatus 429 %v 503 %v 502 %v",
			p.Declares(429), p.RetriesStatus(429), p.RetriesStatus(503), p.RetriesStatus(502))
	}
	if got := p.PlannedStatuses(); !slices.Equal(got, []int{429, 502, 409, 503}) {
		t.Errorf("PlannedStatuses() = %v, want [429 502 409 503] (the file's order; 5xx as the first 5xx it retries whatever the body)", got)
	}
	if d := strings.Join(p.Deviations(), "; "); !strings.Contains(d, "retries a 429 only when its $.error.code is lock_timeout") ||
		!strings.Contains(d, "does not retry an attempt that timed out") {
		t.Errorf("deviations %q: want the conditional 429 and the timeout not retried", d)
	}
}

// Applied, a condition sets its member (objects made on the way, a string replaced) or removes it;
// Met reads it back.
func TestRetryWhenApply(t *testing.T) {
	w := RetryWhen{Status: 429, JSONPath: "$.error.code", Equals: "lock_timeout"}
	cases := []struct {
		body string
		met  bool
		want string
	}{
		{`{"error": {"type": "rate_limit_error", "code": "x"}}`, true, `{"error":{"code":"lock_timeout","type":"rate_limit_error"}}`},
		{`{"error": {"type": "rate_limit_error", "code": "x"}}`, false, `{"error":{"type":"rate_limit_error"}}`},
		{`{"error": "busy"}`, true, `{"error":{"code":"lock_timeout"}}`},
		{`{"error": "busy"}`, false, `{"error": "busy"}`},
		{`busy`, true, `{"error":{"code":"lock_timeout"}}`},
		{`busy`, false, `busy`},
	}
	for _, c := range cases {
		got := w.Apply([]byte(c.body), c.met)
		if string(got) != c.want || w.Met(got) != c.met {
			t.Errorf("Apply(%s, %v) = %s (met %v), want %s", c.body, c.met, got, w.Met(got), c.want)
		}
	}

	// A member the declared shape holds as a boolean or a number stays one, so that a client that
	// reads it typed ({"retryable": bool}) can read it; a value that is not one is written as text.
	typed := []struct {
		w          RetryWhen
		body, want string
	}{
		{RetryWhen{Status: 503, JSONPath: "$.error.retryable", Equals: "true"}, `{"error": {"retryable": false}}`, `{"error":{"retryable":true}}`},
		{RetryWhen{Status: 429, JSONPath: "$.error.code", Equals: "42"}, `{"error": {"code": 7}}`, `{"error":{"code":42}}`},
		{RetryWhen{Status: 429, JSONPath: "$.error.code", Equals: "lock_timeout"}, `{"error": {"code": 7}}`, `{"error":{"code":"lock_timeout"}}`},
		{RetryWhen{Status: 503, JSONPath: "$.error.retryable", Equals: "true"}, `{"error": {}}`, `{"error":{"retryable":"true"}}`},
	}
	for _, c := range typed {
		got := c.w.Apply([]byte(c.body), true)
		if string(got) != c.want || !c.w.Met(got) {
			t.Errorf("Apply(%s) with %s = %s (met %v), want %s", c.body, c.w.Equals, got, c.w.Met(got), c.want)
		}
	}
}

// A broken conditional entry or should-retry header is refused with its line.
func TestRetryWhenProblems(t *testing.T) {
	cases := []struct {
		name, extra string
		want        []string
	}{
		{"no when", "    retry: {retries: [{status: 429}]}",
			[]string{"t.yaml:16: clients[0].retry.retries[0].when: missing required field"}},
		{"a path with an index", "    retry: {retries: [{status: 429, when: {jsonpath: \"$.errors[0].code\", equals: x}}]}",
			[]string{"t.yaml:16: clients[0].retry.retries[0].when.jsonpath: \"$.errors[0].code\": name a member by names only"}},
		{"a path that selects several", "    retry: {retries: [{status: 429, when: {jsonpath: $..code, equals: x}}]}",
			[]string{"t.yaml:16: clients[0].retry.retries[0].when.jsonpath: \"$..code\" can select several values"}},
		{"no value", "    retry: {retries: [{status: 429, when: {jsonpath: $.error.code}}]}",
			[]string{"t.yaml:16: clients[0].retry.retries[0].when.equals: missing required field"}},
		{"a status out of range", "    retry: {retries: [{status: 200, when: {jsonpath: $.code, equals: x}}]}",
			[]string{"t.yaml:16: clients[0].retry.retries[0].status: must be an integer from 400 to 599"}},
		{"a conditional status never resent", "    retry: {retries: [{status: 422, when: {jsonpath: $.code, equals: x}}]}",
			[]string{"t.yaml:16: clients[0].retry.never: 422 is both retried (on a condition) and never resent"}},
		{"a header without values", "    retry: {should_retry_header: {name: X-Should-Retry}}",
			[]string{"t.yaml:16: clients[0].retry.should_retry_header: declare retry, never or both"}},
		{"a header with one value twice", `    retry: {should_retry_header: {name: X-Should-Retry, retry: "yes", never: "YES"}}`,
			[]string{`t.yaml:16: clients[0].retry.should_retry_header.never: "YES" is also the retry value`}},
		{"a bad header name", `    retry: {should_retry_header: {name: "X Should", retry: "true"}}`,
			[]string{`t.yaml:16: clients[0].retry.should_retry_header.name: "X Should" is not a valid header name`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(strings.Replace(sdkClient, "%EXTRA%", c.extra, 1), nil)
			wantProblems(t, probs, c.want)
		})
	}
}

// {{.Restart}} is 0 on a first start and 1 on a restart, in command and env alike.
func TestClientRestartPlaceholder(t *testing.T) {
	src := strings.Replace(sdkClient, `env: {SDK_CA: "{{.CAFile}}"}`,
		`env: {SDK_CA: "{{.CAFile}}", OPS: '{{if eq .Restart "1"}}0{{else}}{{.Ops}}{{end}}'}`, 1)
	src = strings.Replace(src, `--ref, "{{.Ref}}"]`, `--ref, "{{.Ref}}", "--resume={{.Restart}}"]`, 1)
	tg, probs := parseString(strings.Replace(src, "%EXTRA%", "", 1), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	c := tg.Clients[0]
	for _, restart := range []string{"0", "1"} {
		argv, env, err := c.Render(ClientVars{URL: "http://127.0.0.1:9", Ops: "3", Restart: restart}, nil)
		wantOps := map[string]string{"0": "OPS=3", "1": "OPS=0"}[restart]
		if err != nil || argv[len(argv)-1] != "--resume="+restart || !slices.Contains(env, wantOps) {
			t.Errorf("restart %s: argv %q env %q (%v), want --resume=%s and %s", restart, argv, env, err, restart, wantOps)
		}
	}
}

// An unquoted JSONPath with brackets inside a flow sequence breaks the YAML: the error says to
// quote it.
func TestBadYAMLSuggestsQuotingABracketedPath(t *testing.T) {
	src := "clients:\n  - name: c\n    operations:\n      - name: o\n        path: /x\n        identity: [$.amount, $['metadata[ref]']]\n"
	_, probs := parseString(src, nil)
	if len(probs) != 1 || !strings.HasPrefix(probs[0], "t.yaml:6: bad YAML:") ||
		!strings.Contains(probs[0], `quote a JSONPath with brackets: "$['metadata[ref]']"`) {
		t.Errorf("problems %q, want one at line 6 suggesting to quote the path", probs)
	}
	_, probs = parseString(strings.Replace(src, `$['metadata[ref]']`, `"$['metadata[ref]']"`, 1), nil)
	if probs != nil {
		t.Errorf("quoted, the path is refused: %q", probs)
	}
}
