package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/faults/ports"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
)

// The acceptance of asynchronous operations (issue 39): the reference API in its asynchronous
// mode, started through reference-async.yaml with its worker making every record 300 ms after the
// 202, passes replay, race, dropped-response and crash-after-claim, each spec counting once its
// operations are done; the same API described without its async blocks fails with missing-record.

// asyncDelay is how long after its 202 the reference's worker makes a record in these tests.
const asyncDelay = 300 * time.Millisecond

// asyncTarget parses doc (reference-async.yaml, or a variant of it) for a reference API started
// with serve --async --async-delay asyncDelay on SQLite, on a port reserved for it.
func asyncTarget(t *testing.T, doc []byte) *targets.Target {
	t.Helper()
	reserved, err := ports.Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"RETRYSAFE_BIN": frameworktest.Binary(t), "RETRYSAFE_URL": reserved.URLs()[0], "RETRYSAFE_REUSE_PORT": "true",
		"RETRYSAFE_STORE": "sqlite", "RETRYSAFE_DSN": filepath.Join(t.TempDir(), "async.db"), "RETRYSAFE_MUTANT": "none",
		"RETRYSAFE_RETENTION": "1h", "RETRYSAFE_LOCK_TIMEOUT": "3s", "RETRYSAFE_ASYNC_DELAY": asyncDelay.String(),
		"RETRYSAFE_ASYNC_SETTLE": "10s", "RETRYSAFE_DURABLE": "true",
	}
	tg, err := targets.Parse("reference-async.yaml", doc, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
	if err != nil {
		reserved.Close()
		t.Fatal(err)
	}
	tg.Own(reserved)
	t.Cleanup(func() { tg.Close() })
	return tg
}

// runSelected opens a harness on tg and runs the selected properties.
func runSelected(t *testing.T, tg *targets.Target, filter string, s suites.Settings) *reports.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if s.Seed == 0 {
		s.Seed = 1
	}
	h, err := suites.Open(ctx, tg, suites.WithSettings(s))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.Run(ctx, suites.Selection{LabelFilter: filter})
	if err != nil {
		t.Fatal(err)
	}
	return res.Report
}

// pendingRe reads how long the slowest operation of a spec was still pending after its 202.
var pendingRe = regexp.MustCompile(`asynchronous operations settled, the slowest still pending ([0-9.]+m?s) after its 202`)

func TestAsyncAPIPassesAfterSettling(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the reference API's processes")
	}
	run := runSelected(t, asyncTarget(t, examples.ReferenceAsync),
		"property:replay || property:race || property:dropped-response || property:crash-after-claim",
		suites.Settings{ReplayN: 3, RaceK: 8, RaceRounds: 2})
	want := map[string]bool{"replay": true, "race": true, "dropped-response": true, "crash-after-claim": true}
	for _, p := range run.Properties {
		delete(want, p.Name)
		for _, sp := range p.Specs {
			if sp.Verdict != reports.Pass {
				t.Errorf("%s %s: %s: %s", p.Name, sp.Text, sp.Verdict, sp.Failure)
				continue
			}
			if !strings.Contains(sp.Observed, "asynchronous operations settled") {
				t.Errorf("%s %s: no operation was followed: %q", p.Name, sp.Text, sp.Observed)
			}
			if p.Name == "dropped-response" || p.Name == "crash-after-claim" {
				continue // they wait for the record themselves (it shows the cut request was processed; the restart)
			}
			// The record came 300 ms after the 202: the spec counted only once it was there.
			m := pendingRe.FindStringSubmatch(sp.Observed)
			if m == nil {
				t.Errorf("%s %s: no operation was seen pending before it settled: %q", p.Name, sp.Text, sp.Observed)
				continue
			}
			if d, _ := time.ParseDuration(m[1]); d < asyncDelay-100*time.Millisecond {
				t.Errorf("%s %s: the slowest operation was pending %v, want about %v", p.Name, sp.Text, d, asyncDelay)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("properties that did not run: %v", want)
	}
}

// withoutAsync is reference-async.yaml without its async blocks: the same API described as if it
// finished inside the request.
func withoutAsync(doc []byte) []byte {
	var out []string
	skipping := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "    async:"):
			skipping = true
			continue
		case skipping && strings.HasPrefix(line, "      "):
			continue
		}
		skipping = false
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n"))
}

func TestAsyncAPIWithoutAsyncBlockFailsWithMissingRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the reference API's processes")
	}
	doc := withoutAsync(examples.ReferenceAsync)
	if strings.Contains(string(doc), "async:") {
		t.Fatalf("the async blocks are still there:\n%s", doc)
	}
	run := runSelected(t, asyncTarget(t, doc), "property:replay", suites.Settings{ReplayN: 3})
	for _, p := range run.Properties {
		for _, sp := range p.Specs {
			if sp.Verdict != reports.Fail || len(sp.Anomalies) == 0 || sp.Anomalies[0].Kind != reports.KindMissingRecord {
				t.Errorf("%s %s: %s %v, want a failure with missing-record: %s", p.Name, sp.Text, sp.Verdict, kindsOf(sp.Anomalies), sp.Failure)
			}
		}
	}
}

func kindsOf(as []reports.Anomaly) []string {
	var out []string
	for _, a := range as {
		out = append(out, string(a.Kind))
	}
	return out
}

// An async settle longer than --max-wait skips the API's specs, with both durations.
func TestAsyncSettleLongerThanMaxWaitSkips(t *testing.T) {
	doc := strings.ReplaceAll(string(examples.ReferenceAsync), `"${RETRYSAFE_ASYNC_SETTLE:-10s}"`, "2m")
	tg, err := targets.Parse("reference-async.yaml", []byte(doc), func(name string) (string, bool) {
		return map[string]string{"RETRYSAFE_URL": "http://127.0.0.1:1"}[name], name == "RETRYSAFE_URL"
	})
	if err != nil {
		t.Fatal(err)
	}
	tg.Lifecycle = nil // nothing is started: the skip is decided before any spec runs
	tg.Downstream = nil
	h, err := suites.Open(context.Background(), tg, suites.WithSettings(suites.Settings{MaxWait: 30 * time.Second}),
		suites.WithoutBaseline(), suites.WithoutReachabilityCheck())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	specs, err := h.Specs(suites.Selection{LabelFilter: "property:replay"})
	if err != nil || len(specs) == 0 {
		t.Fatalf("specs %v, %v", specs, err)
	}
	for _, sp := range specs {
		const want = "operation orders's async.settle 2m0s and operation refunds's async.settle 2m0s are longer than --max-wait 30s"
		if !strings.HasPrefix(sp.Skip, want) {
			t.Errorf("%s: skip %q, want %q", sp.FullText(), sp.Skip, want)
		}
	}
}

// stuckTarget describes an API whose operations are accepted (202) and never done; location says
// whether the 202 names its status resource.
func stuckTarget(t *testing.T, location bool) *targets.Target {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/exports", func(w http.ResponseWriter, r *http.Request) {
		if location {
			w.Header().Set("Location", "/v1/exports/ops/x1")
		}
		writeJSON(w, http.StatusAccepted, []byte(`{"status":"queued"}`))
	})
	mux.HandleFunc("GET /v1/exports/ops/x1", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"queued"}`))
	})
	mux.HandleFunc("GET /v1/exports", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, []byte(`{"count":0}`)) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	doc := `instances: ["` + srv.URL + `"]
operations:
  - name: exports
    path: /v1/exports
    body: '{"ref": "{{.Ref}}"}'
    observer: {http: {path: /v1/exports, query: "ref={{.Ref}}", jsonpath: $.count}}
    async:
      reference: {header: Location}
      state: {jsonpath: $.status, done: [succeeded], failed: [failed]}
      poll: 50ms
      settle: 300ms
`
	tg, err := targets.Parse("exports.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// An operation still pending when its settle has passed fails the spec with operation-not-settled
// (not a missing record: its records are not judged), and the evidence names its reference, each
// read's state and when; a 202 without the reference the async block names fails so too.
func TestAsyncNotSettled(t *testing.T) {
	run := runSelected(t, stuckTarget(t, true), "property:replay", suites.Settings{ReplayN: 2})
	sp := run.Properties[0].Specs[0]
	if sp.Verdict != reports.Fail || fmt.Sprint(kindsOf(sp.Anomalies)) != "[operation-not-settled]" {
		t.Fatalf("%s %v, want a failure with operation-not-settled alone: %s", sp.Verdict, kindsOf(sp.Anomalies), sp.Failure)
	}
	if len(sp.Anomalies[0].Seqs) == 0 {
		t.Error("the anomaly names no answer it rests on")
	}
	if sp.Anomalies[0].Kind.Unsafe() {
		t.Error("operation-not-settled is unsafe")
	}
	ev := sp.Evidence.Message
	for _, want := range []string{"reference /v1/exports/ops/x1", "queued at +", "not settled within 300ms"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	if !strings.Contains(strings.Join(sp.Evidence.Attempts, "\n"), "! operation reference: /v1/exports/ops/x1") {
		t.Errorf("the transcripts do not name the reference:\n%s", strings.Join(sp.Evidence.Attempts, "\n"))
	}

	run = runSelected(t, stuckTarget(t, false), "property:replay", suites.Settings{ReplayN: 2})
	sp = run.Properties[0].Specs[0]
	if fmt.Sprint(kindsOf(sp.Anomalies)) != "[operation-not-settled]" || !strings.Contains(sp.Failure, "the 202 carries no operation reference to follow: async.reference (header Location) finds nothing") {
		t.Errorf("a 202 without Location: %v: %s", kindsOf(sp.Anomalies), sp.Failure)
	}
}
