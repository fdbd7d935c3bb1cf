package selftest

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// The example files reference-events-amqp.yaml, -nats.yaml and -webhook.yaml, run as they are
// (through ManagedEvents, which names their exchange or stream for the test) against the
// reference API with its outbox on SQLite: the correct API passes every events property on each
// transport (the kills and the broker link's cuts included), each events mutant fails the
// property that catches it with its kind on a broker, and nothing is left on either broker.
func TestReferenceEventsExamples(t *testing.T) {
	bin := frameworktest.Binary(t)
	cases := []struct {
		transport string
		mutant    reference.Mutant
		filter    string
		kind      reports.Kind // "" = every property passes
	}{
		{reference.EventsAMQP, reference.MutantNone, framework.EventsLabel, ""},
		{reference.EventsNATS, reference.MutantNone, framework.EventsLabel, ""},
		{reference.EventsWebhook, reference.MutantNone, framework.EventsLabel, ""},
		{reference.EventsAMQP, reference.MutantPublishBeforeCommit, "property:event-not-before-commit", reports.KindGhostEvent},
		{reference.EventsNATS, reference.MutantReplayRepublishes, "property:event-per-record", reports.KindEventNewID},
		{reference.EventsAMQP, reference.MutantDualWrite, "property:event-after-crash", reports.KindMissingEvent},
		{reference.EventsNATS, reference.MutantRelayNewID, "property:event-under-broker-outage", reports.KindEventNewID},
		{reference.EventsAMQP, reference.MutantRelayMarksOnError, "property:event-under-broker-outage", reports.KindMissingEvent},
	}
	for _, c := range cases {
		name := c.transport + "/" + string(c.mutant)
		if c.mutant == reference.MutantNone {
			name = c.transport + "/correct"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tg, err := ManagedEvents(EventsSpec{Transport: c.transport, Store: "sqlite", DSN: filepath.Join(t.TempDir(), "api.db"),
				Binary: bin, Mutant: string(c.mutant), LockTimeout: 3 * time.Second, Names: "test-" + c.transport})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			names := ""
			if p := tg.Operations[0].Publishes[0]; p.AMQP != nil {
				names = p.AMQP.Exchange
			} else if p.NATS != nil {
				names = p.NATS.Stream
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			runID := strings.TrimPrefix(broker.UniqueName("ev"), broker.DefaultNamePrefix+"-") // names the observer's queue too
			h, err := framework.Open(ctx, tg, framework.WithSettings(framework.Settings{Seed: 31, RunID: runID}))
			if err != nil {
				t.Fatalf("open (these tests need RabbitMQ and NATS JetStream on 127.0.0.1): %v", err)
			}
			res, err := h.Run(ctx, framework.Selection{LabelFilter: c.filter})
			if cerr := h.Close(); cerr != nil {
				t.Errorf("close: %v", cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			judgeEvents(t, res.Report, c.kind)
			wantFaultsPaired(t, res.Report, c.filter)
			wantNothingLeft(t, c.transport, names)
			wantNothingLeft(t, c.transport, broker.DefaultNamePrefix+"-"+runID)
		})
	}
}

// judgeEvents checks a run of the events properties: every property passes (kind ""), or the
// one that ran fails with an anomaly of kind.
func judgeEvents(t *testing.T, run *reports.Run, kind reports.Kind) {
	t.Helper()
	if len(run.Properties) == 0 {
		t.Fatal("no property ran")
	}
	for _, p := range run.Properties {
		var kinds []reports.Kind
		for _, s := range p.Specs {
			for _, a := range s.Anomalies {
				kinds = append(kinds, a.Kind)
			}
		}
		switch {
		case kind == "" && p.Verdict != reports.Pass:
			t.Errorf("%s: %s (%s), want pass: %s", p.Name, p.Verdict, p.Reason, failingSpecs(p))
		case kind != "" && (p.Verdict != reports.Fail || !slices.Contains(kinds, kind)):
			t.Errorf("%s: %s with %v, want a failure with %s: %s", p.Name, p.Verdict, kinds, kind, p.Reason)
		}
	}
}

// wantFaultsPaired checks report.json's faults[]: every inject healed later, once, and the
// faults of the events' fault properties that ran there: at least six kills (five seeded, one
// inside the hold) for event-after-crash, the link's cut and lost confirm for
// event-under-broker-outage.
func wantFaultsPaired(t *testing.T, run *reports.Run, filter string) {
	t.Helper()
	open := map[string]int{}
	kinds := map[string]int{}
	for _, f := range run.Faults {
		switch f.Action {
		case "inject":
			open[f.Fault]++
			kinds[f.Kind]++
		case "heal":
			if open[f.Fault] == 0 {
				t.Errorf("heal of %q without an inject before it", f.Fault)
			}
			open[f.Fault]--
		}
	}
	for name, n := range open {
		if n != 0 {
			t.Errorf("%d injects of %q never healed", n, name)
		}
	}
	all := filter == framework.EventsLabel
	if (all || strings.Contains(filter, "event-after-crash")) && (kinds["kill"] < 6 || kinds["hold-publish"] != 1) {
		t.Errorf("event-after-crash injected %d kills and %d holds, want at least 6 and 1", kinds["kill"], kinds["hold-publish"])
	}
	// A lost confirm that exercised nothing is tried once more.
	if (all || strings.Contains(filter, "event-under-broker-outage")) && (kinds["cut-broker-link"] != 1 || kinds["lose-confirm"] < 1 || kinds["lose-confirm"] > 2) {
		t.Errorf("event-under-broker-outage injected %d cuts and %d lost confirms, want 1 and 1 or 2", kinds["cut-broker-link"], kinds["lose-confirm"])
	}
}

// wantNothingLeft fails when a queue, exchange or stream whose name starts with prefix (a run's
// exchange or stream, and its observer's queue) is left on the transport's broker.
func wantNothingLeft(t *testing.T, transport, prefix string) {
	t.Helper()
	kind := map[string]broker.Kind{reference.EventsAMQP: broker.AMQP, reference.EventsNATS: broker.NATS}[transport]
	if kind == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inv, err := broker.TakeInventory(ctx, broker.WithKinds(kind))
	if err != nil {
		t.Errorf("inventory after the run: %v", err)
		return
	}
	if left := inv.WithPrefix(prefix); !left.Empty() {
		t.Errorf("the run left %s", left)
	}
}
