package targets

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// asyncFile is a file whose one operation carries %OP% (fields indented under the operation)
// and whose profile carries %PROFILE%.
const asyncFile = `instances: [http://127.0.0.1:8080/api]
operations:
  - name: exports
    path: /v1/exports
    body: '{"ref": "{{.Ref}}"}'
%OP%
profile:
  base: ietf
%PROFILE%
`

func asyncTarget(op, profile string) string {
	return strings.NewReplacer("%OP%", op, "%PROFILE%", profile).Replace(asyncFile)
}

const (
	locationAsync = `    async:
      reference: {header: Location}
      state: {jsonpath: $.status, done: [succeeded], failed: [failed, cancelled]}
      poll: 50ms
      settle: 5s`
	idAsync = `    async:
      reference: {jsonpath: $.id, path: "/v1/operations/{{.ID}}"}
      state: {jsonpath: $.status, done: [succeeded]}`
	orderResource = `    resource: {path: "/v1/exports/{{.ID}}", id: $.id}`
)

// The three ways a reference travels, the state lists, poll and settle decode as declared and
// give the reference and phase of an answer.
func TestAsyncDecode(t *testing.T) {
	tg, probs := parseString(asyncTarget(locationAsync, ""), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	a := tg.Operations[0].Async
	if a.Header != "Location" || a.Poll != 50*time.Millisecond || a.Settle != 5*time.Second ||
		strings.Join(a.Done, ",") != "succeeded" || strings.Join(a.Failed, ",") != "failed,cancelled" {
		t.Errorf("async %+v", a)
	}
	h := http.Header{"Location": {"/v1/operations/op_1"}}
	if ref, err := a.Reference(h, nil, Vars{}); ref != "/v1/operations/op_1" || err != nil {
		t.Errorf("reference %q, %v", ref, err)
	}
	for _, c := range []struct {
		body  string
		state string
		phase Phase
	}{
		{`{"status": "running"}`, "running", PhasePending},
		{`{"status": "succeeded"}`, "succeeded", PhaseDone},
		{`{"status": "cancelled"}`, "cancelled", PhaseFailed},
	} {
		state, ph, err := a.PhaseOf([]byte(c.body))
		if state != c.state || ph != c.phase || err != nil {
			t.Errorf("%s: state %q, phase %s, %v", c.body, state, ph, err)
		}
	}
	if _, _, err := a.PhaseOf([]byte(`{"state": "x"}`)); err == nil {
		t.Error("a status resource without the state: no error")
	}

	tg, probs = parseString(asyncTarget(idAsync+"\n"+orderResource, "  replay_returns: current"), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	op := tg.Operations[0]
	if op.Async.Poll != DefaultPoll || op.Async.Settle != DefaultSettle || tg.Profile.ReplayReturns != ReplayCurrent {
		t.Errorf("defaults: async %+v, replay_returns %s", op.Async, tg.Profile.ReplayReturns)
	}
	if ref, err := op.Async.Reference(nil, []byte(`{"id": "op 7", "status": "pending"}`), Vars{}); ref != "/v1/operations/op%207" || err != nil {
		t.Errorf("reference %q, %v", ref, err)
	}
	if ref, err := op.Async.Reference(nil, []byte(`{"status": "pending"}`), Vars{}); ref != "" || err != nil {
		t.Errorf("an answer without an id: reference %q, %v", ref, err)
	}
	if id, ok := op.Resource.IDOf([]byte(`{"id": 42}`)); id != "42" || !ok {
		t.Errorf("id %q %v", id, ok)
	}
	if p, err := op.Resource.PathOf(Vars{}, "exp_1"); p != "/v1/exports/exp_1" || err != nil {
		t.Errorf("resource path %q, %v", p, err)
	}

	tg, probs = parseString(asyncTarget(`    async: {reference: {jsonpath: $.status_url}, state: {jsonpath: $.state, done: [done]}}`,
		"  in_flight: status-resource"), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	if p := tg.Profile; p.InFlight != InFlightStatusResource || !p.InFlightAnswer(202) || p.Success(202) || !p.Success(201) || p.AcceptsWaitReplay() {
		t.Errorf("status-resource profile %+v", p)
	}
	if ref, _ := tg.Operations[0].Async.Reference(nil, []byte(`{"status_url": "http://api.example/ops/1"}`), Vars{}); ref != "http://api.example/ops/1" {
		t.Errorf("reference %q", ref)
	}
}

// A status resource's URL is the instance's: a path under its base, an absolute URL's path on
// its origin.
func TestStatusURL(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/api")
	inst := &Instance{URL: u}
	for _, c := range []struct{ ref, want string }{
		{"/v1/operations/op_1", "http://127.0.0.1:8080/api/v1/operations/op_1"},
		{"http://127.0.0.1:9999/v1/operations/op_1?x=1", "http://127.0.0.1:8080/v1/operations/op_1?x=1"},
	} {
		if got, err := StatusURL(inst, c.ref); got != c.want || err != nil {
			t.Errorf("%s: %q, %v", c.ref, got, err)
		}
	}
	if _, err := StatusURL(inst, "operations/1"); err == nil {
		t.Error("a relative reference without a leading /: no error")
	}
}

// Every mistake in an async or resource block, and a profile that needs one the operation lacks,
// is a located problem.
func TestAsyncProblems(t *testing.T) {
	for _, c := range []struct {
		name, op, profile string
		want              []string
	}{
		{"no reference", "    async: {state: {jsonpath: $.status, done: [ok]}}", "",
			[]string{"t.yaml:6: operations[0].async.reference: missing required field"}},
		{"both", "    async: {reference: {header: Location, jsonpath: $.id}, state: {jsonpath: $.status, done: [ok]}}", "",
			[]string{"t.yaml:6: operations[0].async.reference: declare exactly one of header"}},
		{"no state", "    async: {reference: {header: Location}}", "",
			[]string{"t.yaml:6: operations[0].async.state: missing required field"}},
		{"no done", "    async:\n      reference: {header: Location}\n      state: {jsonpath: $.status}", "",
			[]string{"t.yaml:8: operations[0].async.state.done: must list at least one state"}},
		{"both lists", "    async:\n      reference: {header: Location}\n      state: {jsonpath: $.status, done: [ok], failed: [ok]}", "",
			[]string{`t.yaml:8: operations[0].async.state.failed: "ok" is also listed in done`}},
		{"bad path", "    async:\n      reference: {jsonpath: $.id, path: \"ops/{{.ID}}\"}\n      state: {jsonpath: $.status, done: [ok]}", "",
			[]string{`t.yaml:7: operations[0].async.reference.path: must start with /`}},
		{"bad placeholder", "    async:\n      reference: {jsonpath: $.id, path: \"/ops/{{.Id}}\"}\n      state: {jsonpath: $.status, done: [ok]}", "",
			[]string{`t.yaml:7: operations[0].async.reference.path: unknown placeholder {{.Id}}`}},
		{"path with header", "    async:\n      reference: {header: Location, path: /ops}\n      state: {jsonpath: $.status, done: [ok]}", "",
			[]string{`t.yaml:7: operations[0].async.reference.path: goes with jsonpath`}},
		{"plural state", "    async:\n      reference: {header: Location}\n      state: {jsonpath: \"$.items[*].status\", done: [ok]}", "",
			[]string{`t.yaml:8: operations[0].async.state.jsonpath: "$.items[*].status" may select several values`}},
		{"poll over settle", "    async:\n      reference: {header: Location}\n      state: {jsonpath: $.status, done: [ok]}\n      poll: 10s\n      settle: 1s", "",
			[]string{`t.yaml:9: operations[0].async.poll: 10s is longer than settle 1s`}},
		{"bad settle", "    async:\n      reference: {header: Location}\n      state: {jsonpath: $.status, done: [ok]}\n      settle: soon", "",
			[]string{`t.yaml:9: operations[0].async.settle: bad duration "soon"`}},
		{"resource without id", `    resource: {path: "/v1/x/{{.ID}}"}`, "",
			[]string{"t.yaml:6: operations[0].resource.id: missing required field"}},
		{"bad replay_returns", "", "  replay_returns: latest",
			[]string{`t.yaml:9: profile.replay_returns: must be original, current or reference, got "latest"`}},
		{"current without resource", "", "  replay_returns: current",
			[]string{"t.yaml:9: profile.replay_returns: current needs operation exports's resource block"}},
		{"reference without async", "", "  replay_returns: reference",
			[]string{"t.yaml:9: profile.replay_returns: reference needs operation exports's async block"}},
		{"status-resource without async", "", "  in_flight: status-resource",
			[]string{"t.yaml:9: profile.in_flight: status-resource needs operation exports's async block"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(asyncTarget(c.op, c.profile), nil)
			wantProblems(t, probs, c.want)
		})
	}
}
