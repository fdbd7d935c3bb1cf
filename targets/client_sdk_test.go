package targets

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// providerClient is a form-body SDK of a provider with its own error shape: the business
// reference in metadata[ref], errors declared per client and per operation; %EXTRA% is replaced
// by each test (retry lines).
const providerClient = `clients:
  - name: sdk
    ops:
      params: {amount: 500}
      same_ref: {params: {amount: 900}, env: {SDK_SAME_REF: "{{.Ref}}-1", SDK_OPS: "{{.Ops}}"}}
    errors:
      default:
        body: '{"error": {"type": "api_error", "message": {{json .Text}}, "request_id": "req_{{.Seq}}"}}'
        headers: {X-Should-Retry: "true"}
      4xx:
        body: '{"error": {"type": "invalid_request_error", "message": "{{.Status}} {{.Text}} for {{.Ref}}"}}'
        headers: {X-Should-Retry: "false", X-Key: "{{.Key}}"}
      "429": {headers: {X-Should-Retry: "true", Retry-After: "7"}}
    operations:
      - name: charge
        path: /v1/charges
        body_format: form
        identity: [$.metadata.ref, "$['amount']"]
        errors:
          "409": {body: 'conflict {{.Key}}', content_type: text/plain}
      - name: refund
        path: /v1/refunds
        identity: ["$['metadata[ref]']"]
%EXTRA%
`

// Error answers: the most specific key of the operation's errors merged over the client's, key by
// key; each rendered over the answer's status, text, reference, key and number.
func TestClientErrorAnswers(t *testing.T) {
	tg, probs := parseString(strings.Replace(providerClient, "%EXTRA%", "", 1), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	c := tg.Clients[0]
	charge, refund := c.Operations[0], c.Operations[1]
	v := ErrorVars{Text: "x", Ref: "r-1", Key: "k-1", Seq: "4"}
	cases := []struct {
		op          *ClientOperation
		status      int
		body, ctype string
		headers     map[string]string
	}{
		{charge, 409, "conflict k-1", "text/plain", nil},
		{refund, 409, `{"error": {"type": "invalid_request_error", "message": "409 x for r-1"}}`, "application/json",
			map[string]string{"X-Should-Retry": "false", "X-Key": "k-1"}},
		{charge, 422, `{"error": {"type": "invalid_request_error", "message": "422 x for r-1"}}`, "application/json",
			map[string]string{"X-Should-Retry": "false"}},
		{charge, 429, "", "application/json", map[string]string{"X-Should-Retry": "true", "Retry-After": "7"}},
		{nil, 404, `{"error": {"type": "invalid_request_error", "message": "404 x for r-1"}}`, "application/json", nil},
		{charge, 503, `{"error": {"type": "api_error", "message": "x", "request_id": "req_4"}}`, "application/json",
			map[string]string{"X-Should-Retry": "true"}},
	}
	for _, tt := range cases {
		e := c.ErrorFor(tt.op, tt.status)
		if e == nil {
			t.Errorf("%d: no error answer", tt.status)
			continue
		}
		v.Status = strconv.Itoa(tt.status)
		body, h, err := e.Render(v)
		if err != nil || string(body) != tt.body || h.Get("Content-Type") != tt.ctype {
			t.Errorf("%d: %q %v %v; want %q, %s", tt.status, body, h, err, tt.body, tt.ctype)
		}
		for k, want := range tt.headers {
			if h.Get(k) != want {
				t.Errorf("%d: header %s = %q, want %q", tt.status, k, h.Get(k), want)
			}
		}
	}
	bare, _ := parseString("clients:\n  - name: c\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n", nil)
	if e := bare.Clients[0].ErrorFor(bare.Clients[0].Operations[0], 503); e != nil {
		t.Errorf("a client without errors has an error answer: %+v", e)
	}
}

// A form field is named by a path either way: $.metadata.ref and $['metadata[ref]'] both read the
// field metadata[ref]; in a JSON body $['metadata[ref]'] is the member of that name.
func TestClientFormIdentity(t *testing.T) {
	tg, probs := parseString(strings.Replace(providerClient, "%EXTRA%", "", 1), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	charge, refund := tg.Clients[0].Operations[0], tg.Clients[0].Operations[1]
	body := []byte(url.Values{"metadata[ref]": {"r-1"}, "amount": {"500"}, "currency": {"usd"}}.Encode())
	req := &http.Request{Method: "POST", URL: &url.URL{Path: "/v1/charges"}, Header: http.Header{}}
	if id := charge.IdentityOf(req, body); id != "r-1 | 500" {
		t.Errorf("form identity = %q, want r-1 | 500 (from metadata[ref] and amount)", id)
	}
	if id := refund.IdentityOf(req, []byte(`{"metadata[ref]": "r-2", "metadata": {"ref": "no"}}`)); id != "r-2" {
		t.Errorf("JSON identity = %q, want the member named metadata[ref]", id)
	}
	if got := charge.ExpectedIdentity("r-1", map[string]any{"amount": jsonNumber("900")}); got != "r-1 | 900" {
		t.Errorf("expected identity = %q, want r-1 | 900", got)
	}
	if got := charge.ExpectedIdentity("r-1", nil); got != "r-1 | ?" {
		t.Errorf("expected identity without params = %q, want r-1 | ?", got)
	}
	for _, tt := range []struct{ path, name, err string }{
		{"$.ref", "ref", ""},
		{"$.metadata.ref", "metadata[ref]", ""},
		{"$['metadata[ref]']", "metadata[ref]", ""},
		{"$.items[0].sku", "items[0][sku]", ""},
		{"$['0']", "0", ""},
		{"$.metadata[ref]", "", "a bracketed name is quoted: $['metadata[ref]'], or written as $.metadata.ref"},
		{"$", "", "names the whole body"},
		{"$..ref", "", "can select several values"},
		{"$.items[*]", "", "can select several values"},
		{"$[0]", "", "does not start with a field name"},
		{"$.items[-1]", "", "counts from the end"},
	} {
		name, err := FormFieldName(tt.path)
		if name != tt.name || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("FormFieldName(%q) = %q, %v; want %q, %q", tt.path, name, err, tt.name, tt.err)
		}
	}
}

// same_ref env values are templates over the scenario's values, like the command's; a client
// that reads {{.OpsFile}} there reads the ops file.
func TestClientSameRefEnv(t *testing.T) {
	tg, probs := parseString(strings.Replace(providerClient, "%EXTRA%", "", 1), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	env, err := tg.Clients[0].Ops.SameRef.RenderEnv(ClientVars{Ref: "rs-7", Ops: "4"})
	if err != nil || env["SDK_SAME_REF"] != "rs-7-1" || env["SDK_OPS"] != "4" {
		t.Errorf("same_ref env = %v, %v; want SDK_SAME_REF=rs-7-1 SDK_OPS=4", env, err)
	}
	if tg.Clients[0].UsesOpsFile() {
		t.Errorf("a client that names no {{.OpsFile}} reads the ops file")
	}
	reads, _ := parseString("clients:\n  - name: c\n    ops: {same_ref: {env: {F: '{{.OpsFile}}'}}}\n    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n", nil)
	if !reads.Clients[0].UsesOpsFile() {
		t.Errorf("a same_ref env value with {{.OpsFile}} does not count as reading the ops file")
	}
}

// honors_retry_after takes true, false or statuses; jitter a name or a range of the cap.
func TestClientRetryAfterAndJitter(t *testing.T) {
	cases := []struct {
		retry      string
		on, off    []int
		lo, hi     time.Duration // the first retry's envelope (cap 200ms)
		jittered   bool
		words      string
		deviations []string
	}{
		{"{honors_retry_after: [429, 503], backoff: {initial: 200ms, jitter: {min: 0.75, max: 1.0}}}", []int{429, 503}, []int{409, 500},
			150 * time.Millisecond, 200 * time.Millisecond, true, "75-100 %", nil},
		{"{honors_retry_after: [503], backoff: {initial: 200ms, jitter: {min: 1, max: 1}}}", []int{503}, []int{429, 409},
			200 * time.Millisecond, 200 * time.Millisecond, false, "100-100 %",
			[]string{"does not honour Retry-After on a 429", "retries without jitter"}},
		{"{honors_retry_after: true, backoff: {initial: 200ms, jitter: equal}}", []int{409, 429, 503}, nil,
			100 * time.Millisecond, 200 * time.Millisecond, true, "equal", nil},
		{"{honors_retry_after: false, backoff: {initial: 200ms}}", nil, []int{429, 503},
			0, 200 * time.Millisecond, true, "full", []string{"does not honour Retry-After"}},
		{"{honors_retry_after: [], backoff: {initial: 200ms, jitter: none}}", nil, []int{429, 503},
			200 * time.Millisecond, 200 * time.Millisecond, false, "none", []string{"does not honour Retry-After", "retries without jitter"}},
	}
	for _, tt := range cases {
		tg, probs := parseString(strings.Replace(providerClient, "%EXTRA%", "    retry: "+tt.retry, 1), nil)
		if probs != nil {
			t.Errorf("%s: %v", tt.retry, probs)
			continue
		}
		p := tg.Clients[0].Retry
		for _, s := range tt.on {
			if !p.HonoursRetryAfterOn(s) {
				t.Errorf("%s: Retry-After on %d not honoured", tt.retry, s)
			}
		}
		for _, s := range tt.off {
			if p.HonoursRetryAfterOn(s) {
				t.Errorf("%s: Retry-After on %d honoured", tt.retry, s)
			}
		}
		lo, hi := p.Backoff.Envelope(1)
		if lo != tt.lo || hi != tt.hi || p.Backoff.Jittered() != tt.jittered || p.Backoff.JitterWords() != tt.words {
			t.Errorf("%s: envelope [%v, %v], jittered %v, %q; want [%v, %v], %v, %q", tt.retry, lo, hi, p.Backoff.Jittered(),
				p.Backoff.JitterWords(), tt.lo, tt.hi, tt.jittered, tt.words)
		}
		if d := p.Deviations(); !slices.Equal(d, tt.deviations) {
			t.Errorf("%s: deviations %q, want %q", tt.retry, d, tt.deviations)
		}
	}
}

// A bad error template, a path that names no field, a jitter range outside [0, 1]: each refused
// with its line and field.
func TestClientSDKProblems(t *testing.T) {
	const head = "clients:\n  - name: c\n"
	const op = "    operations:\n      - {name: o, path: /x, identity: [$.ref]}\n"
	cases := []struct {
		name, src string
		want      []string
	}{
		{"an unknown placeholder in an error body", head + "    errors:\n      5xx: {body: '{\"error\": {{json .Staus}}}'}\n" + op,
			[]string{"t.yaml:4: clients[0].errors.5xx.body: unknown placeholder {{.Staus}} (known: .Status, .Text, .Ref, .Key, .Seq); did you mean {{.Status}}?"}},
		{"a broken error template", head + "    errors:\n      default: {headers: {X-Id: '{{.Seq'}}\n" + op,
			[]string{"t.yaml:4: clients[0].errors.default.headers.X-Id: bad template"}},
		{"an error body that is not JSON", head + "    errors:\n      \"503\": {body: '{\"error\": {{.Text}}}'}\n" + op,
			[]string{"t.yaml:4: clients[0].errors.503.body: not valid JSON when rendered with sample values"}},
		{"an error key that is no status", head + "    errors:\n      \"600\": {body: x}\n      3xx: {body: x}\n" + op,
			[]string{`t.yaml:4: clients[0].errors.600: must be a status 400-599 ("409"), 4xx, 5xx or default, got "600"`,
				`t.yaml:5: clients[0].errors.3xx: must be a status 400-599`}},
		{"an error entry that says nothing", head + "    errors: {default: {}}\n" + op,
			[]string{"t.yaml:3: clients[0].errors.default: declare body, content_type or headers"}},
		{"an operation's error field", head + "    operations:\n      - name: o\n        path: /x\n        identity: [$.ref]\n        errors: {4xx: {body: '{{.Ops}}'}}\n",
			[]string{"t.yaml:7: clients[0].operations[0].errors.4xx.body: unknown placeholder {{.Ops}}"}},
		{"a form identity path that names no field", head + "    operations:\n      - {name: o, path: /x, body_format: form, identity: ['$..ref', '$.metadata[ref]']}\n",
			[]string{`t.yaml:4: clients[0].operations[0].identity[0]: in a form body: "$..ref" can select several values`,
				`t.yaml:4: clients[0].operations[0].identity[1]: in a form body: bad JSONPath "$.metadata[ref]"`}},
		{"a JSON identity path that names no field", head + "    operations:\n      - {name: o, path: /x, identity: ['$', '$.items[*].sku']}\n",
			[]string{`t.yaml:4: clients[0].operations[0].identity[0]: "$" names the whole body`,
				`t.yaml:4: clients[0].operations[0].identity[1]: "$.items[*].sku" can select several values`}},
		{"a jitter range below 0", head + op + "    retry: {backoff: {jitter: {min: -0.25, max: 1}}}\n",
			[]string{`t.yaml:5: clients[0].retry.backoff.jitter.min: must be a fraction of the cap between 0 and 1, got "-0.25"`}},
		{"a jitter range above 1", head + op + "    retry:\n      backoff:\n        jitter: {min: 0.75, max: 1.5}\n",
			[]string{`t.yaml:7: clients[0].retry.backoff.jitter.max: must be a fraction of the cap between 0 and 1, got "1.5"`}},
		{"a jitter range upside down", head + op + "    retry: {backoff: {jitter: {min: 0.9, max: 0.5}}}\n",
			[]string{"t.yaml:5: clients[0].retry.backoff.jitter: min 0.9 is above max 0.5"}},
		{"a jitter range half declared", head + op + "    retry: {backoff: {jitter: {min: 0.5}}}\n",
			[]string{"t.yaml:5: clients[0].retry.backoff.jitter: declare min and max"}},
		{"honors_retry_after naming no status", head + op + "    retry: {honors_retry_after: [429, often]}\n",
			[]string{`t.yaml:5: clients[0].retry.honors_retry_after: must be true, false or a list of status codes 400-599 ([429, 503]), got "often"`}},
		{"a same_ref env template", head + "    ops: {same_ref: {env: {X: '{{.Reff}}'}}}\n" + op,
			[]string{"t.yaml:3: clients[0].ops.same_ref.env.X: unknown placeholder {{.Reff}}"}},
		{"a form fingerprint_ignore that names no field", "instances: [http://127.0.0.1:8080]\noperations:\n  - name: op\n    path: /p\n    body_format: form\n    fingerprint_ignore: ['$[0]']\n",
			[]string{`t.yaml:6: operations[0].fingerprint_ignore[0]: in a form body: "$[0]" does not start with a field name`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}
