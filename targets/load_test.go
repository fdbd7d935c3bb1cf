package targets

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// envOf returns an env lookup over a fixed map.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// parseFixture loads a file from testdata/targets with a controlled environment.
func parseFixture(t *testing.T, name string, env map[string]string) (*Target, []Problem) {
	t.Helper()
	path := filepath.Join("..", "testdata", "targets", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := Parse(path, data, envOf(env))
	if err == nil {
		return tg, nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: error is %T, want *ValidationError: %v", name, err, err)
	}
	return nil, ve.Problems
}

func TestBadFixtures(t *testing.T) {
	dir := filepath.Join("..", "testdata", "targets")
	cases := []struct {
		file   string
		prefix string // FILE:LINE: field
	}{
		{"unknown-field.yaml", "unknown-field.yaml:5: operations[0].methd: unknown field"},
		{"unknown-placeholder.yaml", "unknown-placeholder.yaml:8: operations[0].body: unknown placeholder {{.Reff}} (known: .Ref, .Key, .Tenant)"},
		{"missing-required.yaml", "missing-required.yaml:4: operations[0].path: missing required field"},
		{"bad-yaml.yaml", "bad-yaml.yaml:3: bad YAML:"},
		{"bad-duration.yaml", "bad-duration.yaml:6: retention: bad duration"},
		{"unset-env.yaml", "unset-env.yaml:3: instances[0]: environment variable RETRYSAFE_FIXTURE_UNSET is not set"},
		{"wrong-type.yaml", "wrong-type.yaml:3: shared_store: must be true or false"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			_, probs := parseFixture(t, c.file, nil)
			if len(probs) == 0 {
				t.Fatalf("no problem reported")
			}
			want := filepath.Join(dir, c.prefix)
			if got := probs[0].String(); !strings.HasPrefix(got, want) {
				t.Errorf("first problem\n got: %s\nwant prefix: %s", got, want)
			}
		})
	}
}

func TestValidateUsesProcessEnvironment(t *testing.T) {
	path := filepath.Join("..", "testdata", "targets", "unset-env.yaml")
	// Unset: a warning, the file checked with a stand-in (validate runs before the environment
	// is set); TestValidateStandsInForUnsetVariables has the details.
	if probs, warns := Validate(path); probs != nil || len(warns) != 1 || warns[0].Field != "instances[0]" || warns[0].Line != 3 {
		t.Fatalf("unset: problems %v, warnings %v", probs, warns)
	}
	t.Setenv("RETRYSAFE_FIXTURE_UNSET", "http://127.0.0.1:9")
	if probs, warns := Validate(path); probs != nil || warns != nil {
		t.Fatalf("set: problems %v, warnings %v", probs, warns)
	}
	if probs, _ := Validate(filepath.Join("..", "testdata", "targets", "no-such-file.yaml")); len(probs) != 1 || !strings.Contains(probs[0].Message, "cannot read") {
		t.Fatalf("missing file: %v", probs)
	}
}

func TestEveryProblemIsReported(t *testing.T) {
	_, probs := parseFixture(t, "many-problems.yaml", nil)
	want := []string{
		":3: instances[0]: must be an absolute http",
		":6: operations[0].path: must start with /",
		":7: operations[0].body_format: must be json or form",
		":8: operations[0].key.in: must be header, query or body",
		":9: operations[1].name: duplicate operation \"orders\" (first on line 5)",
		":11: operations[1].body: unknown placeholder {{.Addr}}",
		":13: operations[1].observer.http.jsonpath: bad JSONPath",
		":15: tenants[0].name: missing required field",
		":16: profile: unknown profile \"jsonapi\"",
		":18: lifecycle.command: must be a list of arguments",
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, "many-problems.yaml"+w) }) {
			t.Errorf("missing %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
	err := (&ValidationError{Problems: probs}).Error()
	if strings.Count(err, "\n") != len(probs)-1 {
		t.Errorf("Error() should put one problem per line:\n%s", err)
	}
}

func TestExamplesLoad(t *testing.T) {
	for _, f := range []string{"reference.yaml", "stripe-form.yaml"} {
		tg, err := Parse(filepath.Join("examples", f), mustRead(t, filepath.Join("examples", f)), nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if probs, _ := Validate(filepath.Join("examples", f)); probs != nil {
			t.Fatalf("%s: Validate: %v", f, probs)
		}
		if len(tg.Operations) != 2 || len(tg.Tenants) != 2 {
			t.Errorf("%s: %d operations, %d tenants", f, len(tg.Operations), len(tg.Tenants))
		}
		for _, op := range tg.Operations {
			if op.Observer == nil || op.Observer.HTTP == nil || !op.HasVariant() {
				t.Errorf("%s: %s lacks an HTTP observer or a variant", f, op.Name)
			}
		}
	}
	tg, err := Parse("reference.yaml", mustRead(t, "examples/reference.yaml"), envOf(map[string]string{
		"RETRYSAFE_URL": "http://127.0.0.1:9001,http://127.0.0.1:9002", "RETRYSAFE_RETENTION": "3s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	p := tg.Profile
	if tg.Name != "reference" || len(tg.Instances) != 2 || tg.Instances[1].URL.Port() != "9002" || !tg.SharedStore ||
		tg.Retention != 3*time.Second || tg.LockTimeout != 30*time.Second || p.Base != "ietf" || p.MismatchStatus.String() != "422" ||
		p.InFlight != InFlightStatus || p.InFlightStatus.String() != "409" || p.MaxKeyLength != 255 || p.Expired != ExpiredNew ||
		p.ReplayHeader != (ReplayHeader{"Idempotent-Replayed", "true"}) || !slices.Equal(p.KeyForms, []KeyForm{KeyQuoted, KeyBare}) {
		t.Errorf("reference.yaml decoded wrongly: %+v %+v", tg, p)
	}
	if tg.Tenants[1].Headers["Authorization"] != "Bearer bob" || tg.Operations[1].Path != "/v1/refunds" {
		t.Errorf("tenants/operations decoded wrongly")
	}
	st, err := Parse("stripe.yaml", mustRead(t, "examples/stripe-form.yaml"), envOf(map[string]string{"STRIPE_TEST_KEY": "sk_test_0123456789abcdef"}))
	if err != nil {
		t.Fatal(err)
	}
	sp := st.Profile
	if sp.MismatchStatus.String() != "400" || sp.RequiresKey() || !slices.Equal(sp.KeyForms, []KeyForm{KeyBare}) ||
		st.Operations[0].BodyFormat != BodyForm || !sp.Ignore.IgnoresHeader("stripe-should-retry") || len(sp.Ignore.Paths()) != 1 {
		t.Errorf("stripe profile decoded wrongly: %+v", sp)
	}
	if sec := st.SecretValues(); !slices.Contains(sec, "Bearer sk_test_0123456789abcdef") || !slices.Contains(sec, "sk_test_0123456789abcdef") {
		t.Errorf("SecretValues = %v", sec)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseString parses an inline target and returns its problems as strings.
func parseString(src string, env map[string]string) (*Target, []string) {
	tg, err := Parse("t.yaml", []byte(src), envOf(env))
	if err == nil {
		return tg, nil
	}
	var out []string
	for _, p := range err.(*ValidationError).Problems {
		out = append(out, p.String())
	}
	return nil, out
}

// wantProblems fails unless probs are as many as want, each starting with its want.
func wantProblems(t *testing.T, probs, want []string) {
	t.Helper()
	if len(probs) != len(want) {
		t.Fatalf("got problems:\n  %s\nwant %d:\n  %s", strings.Join(probs, "\n  "), len(want), strings.Join(want, "\n  "))
	}
	for i, w := range want {
		if !strings.HasPrefix(probs[i], w) {
			t.Errorf("problem %d\n got: %s\nwant: %s", i, probs[i], w)
		}
	}
}

const minimal = "instances: [http://127.0.0.1:8080]\noperations:\n  - name: op\n    path: /p\n"

func TestParseProblems(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"empty", "", "t.yaml: the file is empty"},
		{"comment only", "# nothing\n", "t.yaml: the file is empty"},
		{"list root", "- a\n- b\n", "t.yaml:1: must be a mapping"},
		{"no instances", "operations: [{name: a, path: /a}]\n", "t.yaml:1: instances: missing required field"},
		{"no operations", "instances: [http://127.0.0.1:1]\n", "t.yaml:1: operations: missing required field"},
		{"duplicate key", minimal + "retention: 1h\nretention: 2h\n", "t.yaml:6: retention: duplicate key (first set on line 5)"},
		{"unquoted template", "instances: [http://127.0.0.1:1]\nname: {{.Ref}}\n", "t.yaml:2: bad YAML:"},
		{"template syntax", minimal + "    body: '{\"a\": \"{{.Ref}\"}'\n", "t.yaml:5: operations[0].body: bad template:"},
		{"placeholder in header", minimal + "    headers:\n      X-Trace: \"{{.Tenat}}\"\n", "t.yaml:6: operations[0].headers.X-Trace: unknown placeholder {{.Tenat}}"},
		{"nested placeholder", minimal + "    body: '{\"a\": \"{{.Ref.X}}\"}'\n", "t.yaml:5: operations[0].body: unknown placeholder {{.Ref.X}}"},
		{"variable placeholder", minimal + "    body: '{\"a\": \"{{$.Nope}}\"}'\n", "t.yaml:5: operations[0].body: unknown placeholder {{.Nope}}"},
		{"unknown function", minimal + "    body: '{\"a\": {{yaml .Ref}}}'\n", "t.yaml:5: operations[0].body: bad template:"},
		{"invalid json body", minimal + "    body: '{\"a\": {{.Ref}}}'\n", "t.yaml:5: operations[0].body: not valid JSON"},
		{"same variant", minimal + "    body: '{\"a\": 1, \"b\": 2}'\n    variant_body: '{\"b\": 2, \"a\": 1}'\n", "t.yaml:6: operations[0].variant_body: renders the same content"},
		{"negative duration", minimal + "lock_timeout: -5s\n", "t.yaml:5: lock_timeout: bad duration"},
		{"status range", minimal + "profile: {mismatch_status: 42}\n", "t.yaml:5: profile.mismatch_status: must be a status code from 100 to 599 or a class such as 4xx"},
		{"in_flight", minimal + "profile: {in_flight: sometimes}\n", "t.yaml:5: profile.in_flight: must be a status code"},
		{"reject needs status", minimal + "profile: {expired: reject}\n", "t.yaml:5: profile.expired_status: required with expired: reject"},
		{"key form not accepted", minimal + "    key: {form: quoted}\nprofile: stripe\n", "t.yaml:5: operations[0].key.form: quoted is not among profile.key_forms"},
		{"body key needs name", minimal + "    body: '{}'\n    key: {in: body}\n", "t.yaml:6: operations[0].key.name: missing required field"},
		{"body key present", minimal + "    body: '{\"Token\": \"{{.Key}}\"}'\n    key: {in: body, name: Token}\n", "t.yaml:5: operations[0].body: already has the field \"Token\""},
		{"bad env reference", "instances: [\"${1BAD}\"]\n" + minimal[len("instances: [http://127.0.0.1:8080]\n"):], "t.yaml:1: instances[0]: bad environment reference ${1BAD}"},
		{"observer both", minimal + "    observer: {http: {path: /c, jsonpath: $.n}, sql: {driver: sqlite, dsn: x.db, query: select 1}}\n", "t.yaml:5: operations[0].observer: declare exactly one of http and sql"},
		{"sql driver", minimal + "    observer: {sql: {driver: oracle, dsn: x, query: select 1}}\n", "t.yaml:5: operations[0].observer.sql.driver: unknown driver \"oracle\""},
		{"downstream unreachable", minimal + "downstream: {enabled: true}\n", "t.yaml:5: downstream: the target cannot learn the sink's address"},
		{"lifecycle placeholder", minimal + "lifecycle:\n  command: [srv, \"--db={{.Storage}}\"]\n", "t.yaml:5: lifecycle: uses {{.Storage}} but no storage is declared"},
		{"storage host:port", minimal + "storage: {address: localhost, listen: 127.0.0.1:1}\n", "t.yaml:5: storage.address: must be host:port"},
		{"instance credentials", "instances: [\"http://u:p@127.0.0.1:1\"]\noperations: [{name: a, path: /a}]\n", "t.yaml:1: instances[0]: must not carry credentials"},
		{"ca file", minimal + "tls: {ca_file: nope.pem}\n", "t.yaml:5: tls.ca_file: cannot read the CA file"},
		{"two documents", minimal + "---\nname: x\n", "t.yaml:6: a target file holds one YAML document"},
		{"flow duplicate", minimal + "tls: {insecure_skip_verify: true, insecure_skip_verify: false}\n", "t.yaml:5: tls.insecure_skip_verify: duplicate key (first set on line 5)"},
		{"duplicate header", minimal + "    headers:\n      X-A: 1\n      x-a: 2\n", "t.yaml:7: operations[0].headers.x-a: duplicate header (first set on line 6)"},
		{"unknown alias", minimal + "secrets: [*nope]\n", "t.yaml:5: alias *nope refers to no &anchor"},
		{"cleanup both", minimal + "cleanup: {path: /x, sql: {driver: sqlite, dsn: x.db, query: delete from t}}\n", "t.yaml:5: cleanup.path: cleanup is either an HTTP request or sql"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			if !slices.ContainsFunc(probs, func(p string) bool { return strings.HasPrefix(p, c.want) }) {
				t.Errorf("want a problem starting with\n  %s\ngot:\n  %s", c.want, strings.Join(probs, "\n  "))
			}
		})
	}
}

func TestParseFeatures(t *testing.T) {
	src := `name: feat
instances:
  - url: "${BASE:-http://127.0.0.1:1}/api/"
  - "${MORE}"
shared_store: false
defaults: &hdrs
  X-Client: retrysafe
operations:
  - name: create
    method: put
    path: "/v1/things/{{.Ref}}"
    headers:
      <<: *hdrs
      X-Cost: "$${literal}"
    body: |
      {"ref": "{{.Ref}}",
       "who": {{json .Tenant}}}
    key: {in: query, name: token}
profile:
  base: stripe
  in_flight: either
  in_flight_status: 429
  missing_key_status: 400
  replay_header: ""
retention: 1d12h
lifecycle:
  command: [srv, --addr, "{{.Addr}}", --downstream, "{{.Downstream}}"]
  env: {STORE: "{{.Storage}}", PLAIN: x}
  ready: {path: /healthz}
  durable: true
downstream: {}
storage: {address: "127.0.0.1:5432"}
secrets: ["${SECRET:-s3cr3t-value}"]
`
	// An unknown top-level field is an error, so the anchor lives under a known key in real files;
	// here it is reported and everything else still decodes.
	_, probs := parseString(src, map[string]string{"MORE": "http://127.0.0.1:2, http://127.0.0.1:3"})
	if len(probs) != 1 || !strings.HasPrefix(probs[0], "t.yaml:6: defaults: unknown field") {
		t.Fatalf("problems: %v", probs)
	}
	src = strings.Replace(src, "defaults: &hdrs\n  X-Client: retrysafe\n", "", 1)
	src = strings.Replace(src, "    headers:\n      <<: *hdrs\n", "    headers: &hdrs\n      X-Client: retrysafe\n", 1)
	tg, probs := parseString(src, map[string]string{"MORE": "http://127.0.0.1:2, http://127.0.0.1:3"})
	if probs != nil {
		t.Fatal(probs)
	}
	op := tg.Operations[0]
	if len(tg.Instances) != 3 || tg.Instances[0].URL.Path != "/api/" || tg.SharedStore || op.Method != "PUT" ||
		op.Headers["X-Cost"] != "${literal}" || op.Key.In != KeyInQuery || op.Key.Form != KeyBare ||
		tg.Retention != 36*time.Hour || tg.Profile.InFlight != InFlightEither || !tg.Profile.AcceptsInFlightStatus(429) ||
		!tg.Profile.AcceptsWaitReplay() || !tg.Profile.RequiresKey() || tg.Profile.ReplayHeader.Name != "" ||
		tg.Downstream == nil || tg.Downstream.KeyHeader != "Idempotency-Key" || tg.Storage.Address != "127.0.0.1:5432" {
		t.Errorf("decoded wrongly: %+v %+v %+v", tg, op, tg.Profile)
	}
	argv, env, err := tg.Lifecycle.Render(LifecycleVars{Addr: "127.0.0.1:7", Downstream: "http://127.0.0.1:8/c", Storage: "127.0.0.1:9"})
	if err != nil || strings.Join(argv, " ") != "srv --addr 127.0.0.1:7 --downstream http://127.0.0.1:8/c" ||
		!slices.Equal(env, []string{"STORE=127.0.0.1:9", "PLAIN=x"}) || !tg.Lifecycle.Durable || tg.Lifecycle.Ready.Path != "/healthz" {
		t.Errorf("lifecycle: %v %v %v %+v", argv, env, err, tg.Lifecycle)
	}
	req, body, err := op.Build(BuildInput{Instance: &tg.Instances[0], Vars: Vars{Ref: "r", Key: "k", Tenant: `a"b`}})
	if err != nil || req.URL.String() != "http://127.0.0.1:1/api/v1/things/r?token=k" || string(body) != "{\"ref\": \"r\",\n \"who\": \"a\\\"b\"}\n" {
		t.Errorf("build: %v %s %q", err, req.URL, body)
	}
	if !slices.Contains(tg.SecretValues(), "s3cr3t-value") {
		t.Errorf("declared secret missing: %v", tg.SecretValues())
	}
}

func TestMergeKeysOverrideWithoutDuplicates(t *testing.T) {
	src := `instances: [http://127.0.0.1:1]
operations:
  - name: a
    path: /a
    headers: &common
      X-Client: retrysafe
      X-Version: "1"
  - name: b
    path: /b
    headers:
      <<: *common
      X-Version: "2"
`
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatal(probs)
	}
	if h := tg.Operations[1].Headers; h["X-Client"] != "retrysafe" || h["X-Version"] != "2" || len(h) != 2 {
		t.Errorf("merged headers = %v", h)
	}
}

func TestTemplateLineInLiteralBlock(t *testing.T) {
	src := minimal + "    body: |\n      {\"a\": 1,\n       \"b\": \"{{.Key}}\",\n       \"c\": \"{{.Kye}}\"}\n"
	_, probs := parseString(src, nil)
	if len(probs) != 1 || !strings.HasPrefix(probs[0], "t.yaml:8: operations[0].body: unknown placeholder {{.Kye}}") ||
		!strings.Contains(probs[0], "did you mean {{.Key}}?") {
		t.Fatalf("problems: %v", probs)
	}
}

func TestParseNeverPanics(t *testing.T) {
	for _, src := range []string{"{", "[", ":", "- - -", "a: *nope\n", "<<: 1\n", "instances: {url: 1}\n", "\x00", "operations: [[]]\n", "operations: [{key: [1]}]\n", "profile: [ietf]\n"} {
		_, _ = parseString(src, nil)
	}
}

// FuzzParse checks that no input makes the loader panic or return a target together with problems.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"examples/reference.yaml", "examples/stripe-form.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "targets", "*.yaml"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(minimal + "    body: '{{.Ref}} ${X:-y} $${z}'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tg, err := Parse("f.yaml", data, envOf(map[string]string{"RETRYSAFE_URL": "http://127.0.0.1:1"}))
		if (tg == nil) == (err == nil) {
			t.Fatalf("Parse returned target %v and error %v", tg != nil, err)
		}
		if tg != nil {
			tg.Close()
			for _, op := range tg.Operations {
				_, _, _ = op.Build(BuildInput{Instance: &tg.Instances[0], Vars: Vars{Ref: "r", Key: "k"}})
			}
		}
	})
}

// Every example target file in targets/examples parses with the variables the harness sets
// (or their defaults): a file that stops validating fails here, not in a user's hands.
func TestEveryExampleParses(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("examples", "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	env := envOf(map[string]string{"RETRYSAFE_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	for _, f := range files {
		tg, err := Parse(f, mustRead(t, f), env)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(tg.Operations) == 0 && len(tg.Consumers) == 0 && len(tg.Clients) == 0 && tg.Chain == nil {
			t.Errorf("%s: no operations, consumers, clients or chain", f)
		}
		tg.Close()
	}
}
