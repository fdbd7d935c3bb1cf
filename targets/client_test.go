package targets

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// sdkClient is a client that calls its own paths with form bodies, its key in a header, its
// identity a form field and a header; %EXTRA% is replaced by each test.
const sdkClient = `clients:
  - name: sdk
    command: [./sdk-sample, --base, "{{.URL}}", --state, "{{.State}}", --ops, "{{.Ops}}", --ref, "{{.Ref}}"]
    env: {SDK_CA: "{{.CAFile}}"}
    timeout: 20s
    failure: {exit_code: 3, output: "^ERROR "}
    ops:
      params: {amount: 500}
      same_ref: {env: {SDK_SAME_REF_AMOUNT: "900"}}
    operations:
      - name: charge
        path: /v1/{resource}
        body_format: form
        identity: [$.metadata_ref, header:X-Account]
        response: {status: 200, body: '{"id": "ch_{{.Seq}}", "key": {{json .Key}}}'}
%EXTRA%
`

// A clients-only file needs no instances or operations; every field decodes, the retry policy
// takes the articles' defaults where it declares nothing.
func TestClientDecodes(t *testing.T) {
	tg, probs := parseString(strings.Replace(sdkClient, "%EXTRA%", "    retry: {max_attempts: 3, retries: [reset, 5xx], backoff: {jitter: equal}}", 1), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	c := tg.Clients[0]
	if c.Timeout != 20*time.Second || *c.Outcome.Failed.ExitCode != 3 || !c.Outcome.Failed.Output.MatchString("ERROR charge r-1") || c.UsesOpsFile() {
		t.Errorf("client %+v: want timeout 20s, exit code 3, output ^ERROR , no ops file", c)
	}
	if c.Ops.SameRef == nil || c.Ops.SameRef.Env["SDK_SAME_REF_AMOUNT"] != "900" {
		t.Errorf("same_ref = %+v, want env SDK_SAME_REF_AMOUNT=900", c.Ops.SameRef)
	}
	p := c.Retry
	want := DefaultRetryPolicy()
	want.MaxAttempts, want.Retries, want.Backoff.Jitter = 3, []string{"reset", "5xx"}, JitterEqual
	if p.MaxAttempts != want.MaxAttempts || !slices.Equal(p.Retries, want.Retries) || p.Backoff != want.Backoff ||
		!slices.Equal(p.Never, want.Never) || p.AttemptTimeout != want.AttemptTimeout || !p.PersistsKeys || !p.HonorsRetryAfter {
		t.Errorf("retry = %+v, want %+v", p, want)
	}
	if !p.RetriesStatus(503) || p.RetriesStatus(409) || !p.RetriesFailure("reset") || p.RetriesFailure("timeout") {
		t.Errorf("retries %v: want 503 and reset retried, 409 and timeout not", p.Retries)
	}
	if d := p.Deviations(); len(d) == 0 {
		t.Errorf("a policy without 409, 429 and timeout retries shows no deviation")
	}

	argv, env, err := c.Render(ClientVars{URL: "http://127.0.0.1:9", CAFile: "/ca.pem", State: "/s", Ref: "rs-x", Ops: "3"}, nil)
	if err != nil || strings.Join(argv, " ") != "./sdk-sample --base http://127.0.0.1:9 --state /s --ops 3 --ref rs-x" || !slices.Equal(env, []string{"SDK_CA=/ca.pem"}) {
		t.Errorf("render = %q %q %v", argv, env, err)
	}

	op := c.Operation("POST", "/v1/charges")
	if op == nil || c.Operation("POST", "/v1/charges/ch_1") != nil || c.Operation("GET", "/v1/charges") != nil {
		t.Fatalf("/v1/{resource} matched wrong: %v", op)
	}
	body := []byte(url.Values{"metadata_ref": {"r-1"}, "amount": {"500"}}.Encode())
	req := &http.Request{Method: "POST", URL: &url.URL{Path: "/v1/charges"}, Header: http.Header{"Idempotency-Key": {`"k-1"`}, "X-Account": {"acct_9"}}}
	if key, ok := op.KeyOf(req, body); !ok || key != "k-1" {
		t.Errorf("key = %q, %v; want the sf-string header unquoted", key, ok)
	}
	if id := op.IdentityOf(req, body); id != "r-1 | acct_9" {
		t.Errorf("identity = %q", id)
	}
	reordered := []byte("amount=500&metadata_ref=r-1")
	if op.Canonical(body) != op.Canonical(reordered) {
		t.Errorf("a reordered form is another body: %q vs %q", op.Canonical(body), op.Canonical(reordered))
	}
	resp, _, err := op.Response.Render(ResponseVars{Key: "k-1", Seq: "7", Ref: "r-1"})
	if err != nil || string(resp) != `{"id": "ch_7", "key": "k-1"}` {
		t.Errorf("response = %s, %v", resp, err)
	}
}

// A broken clients section is refused field by field, each with its line.
func TestClientProblems(t *testing.T) {
	cases := []struct {
		name, extra string
		want        []string
	}{
		{"a retried status never resent", "    retry: {retries: [5xx, 422]}",
			[]string{"t.yaml:16: clients[0].retry.never: 422 is both retried and never resent"}},
		{"an unknown retry condition", "    retry: {retries: [reset, sometimes]}",
			[]string{"t.yaml:16: clients[0].retry.retries: must list reset, timeout, 5xx or status codes"}},
		{"a backoff that shrinks", "    retry: {backoff: {initial: 2s, max: 1s}}",
			[]string{"t.yaml:16: clients[0].retry.backoff: max 1s is shorter than initial 2s"}},
		{"an unknown jitter", "    retry: {backoff: {jitter: half}}",
			[]string{"t.yaml:16: clients[0].retry.backoff.jitter: must be full, equal, none or {min: 0.75, max: 1.0}"}},
		{"max_attempts out of range", "    retry: {max_attempts: 0}",
			[]string{"t.yaml:16: clients[0].retry.max_attempts"}},
		{"an unknown field", "    retries: 3",
			[]string{"t.yaml:16: clients[0].retries: unknown field"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(strings.Replace(sdkClient, "%EXTRA%", c.extra, 1), nil)
			wantProblems(t, probs, c.want)
		})
	}
	bad := []struct {
		name, src string
		want      []string
	}{
		{"no operations", "clients:\n  - name: c\n    command: [c]\n",
			[]string{"t.yaml:2: clients[0].operations: missing required field"}},
		{"no identity", "clients:\n  - name: c\n    operations:\n      - name: o\n        path: /v1/x\n",
			[]string{"t.yaml:4: clients[0].operations[0].identity: missing required field"}},
		{"an unknown placeholder", "clients:\n  - name: c\n    command: [c, \"{{.Url}}\"]\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n",
			[]string{"t.yaml:3: clients[0].command[1]: unknown placeholder {{.Url}}"}},
		{"a command that is a string", "clients:\n  - name: c\n    command: ./c --url x\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n",
			[]string{"t.yaml:3: clients[0].command: must be a list of arguments"}},
		{"a path without a slash", "clients:\n  - name: c\n    operations:\n      - {name: o, path: v1/x, identity: [$.ref]}\n",
			[]string{"t.yaml:4: clients[0].operations[0].path: must start with /"}},
		{"a bad identity", "clients:\n  - name: c\n    operations:\n      - {name: o, path: /x, identity: [ref]}\n",
			[]string{"t.yaml:4: clients[0].operations[0].identity[0]: must be a body field ($.ref), header:NAME or query:NAME"}},
		{"a key in the body without a name", "clients:\n  - name: c\n    operations:\n      - {name: o, path: /x, identity: [$.ref], key: {in: body}}\n",
			[]string{"t.yaml:4: clients[0].operations[0].key.name: missing required field"}},
		{"a failure that says nothing", "clients:\n  - name: c\n    failure: {}\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n",
			[]string{"t.yaml:3: clients[0].failure: declare exit_code, output or both"}},
		{"a bad failure pattern", "clients:\n  - name: c\n    failure: {output: \"(\"}\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n",
			[]string{"t.yaml:3: clients[0].failure.output: bad regular expression"}},
		{"same_ref that asks nothing", "clients:\n  - name: c\n    ops: {same_ref: {}}\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n",
			[]string{"t.yaml:3: clients[0].ops.same_ref: declare params"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}
