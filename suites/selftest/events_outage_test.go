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

// event-under-broker-outage as production outboxes run (issue 42), through the example files on
// SQLite: a relay that gives up on an event after 2 s of failures loses the events of the
// self-test's outage; a publisher that waits for the broker's answer before it sends (a channel
// per publication) makes the lost confirm exercise nothing, twice (it is tried once more), so the
// spec is unknown with that sentence, never a pass; publish-before-commit, which acknowledges nothing while its link is
// cut (the outage exercises nothing), still fails on what the lost confirm showed: a second id
// for one order, from a publication before the commit.
func TestEventUnderBrokerOutageAsItRuns(t *testing.T) {
	bin := frameworktest.Binary(t)
	const property = "property:event-under-broker-outage"
	cases := []struct {
		name      string
		transport string
		mutant    reference.Mutant
		perPub    bool
		verdict   reports.Verdict
		kind      reports.Kind // the anomaly of a failure
		says      []string     // in the failure (or the unknown reason), or in what a pass observed
	}{
		{name: "relay-gives-up", transport: reference.EventsWebhook, mutant: reference.MutantRelayGivesUp, verdict: reports.Fail,
			kind: reports.KindMissingEvent, says: []string{"cause: a publication lost to the broker link's cut"}},
		{name: "a publisher that waits for the broker", transport: reference.EventsAMQP, perPub: true, verdict: reports.Unknown,
			says: []string{"the lost confirm exercised nothing: the broker took no event of orders ref", "(a second try: the first the broker took no event"}},
		{name: "publish-before-commit, nothing acknowledged while cut", transport: reference.EventsAMQP, mutant: reference.MutantPublishBeforeCommit,
			verdict: reports.Fail, kind: reports.KindEventNewID,
			says: []string{"cause: a publication before the commit", "the broker outage exercised nothing: no operation was acknowledged while the broker link was cut"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tg, err := ManagedEvents(EventsSpec{Transport: c.transport, Store: "sqlite", DSN: filepath.Join(t.TempDir(), "api.db"),
				Binary: bin, Mutant: string(c.mutant), LockTimeout: 3 * time.Second, Names: "test-outage-" + c.transport, ChannelPerPublish: c.perPub})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			runID := strings.TrimPrefix(broker.UniqueName("ev"), broker.DefaultNamePrefix+"-")
			h, err := framework.Open(ctx, tg, framework.WithSettings(framework.Settings{Seed: 31, RunID: runID}))
			if err != nil {
				t.Fatalf("open (these tests need RabbitMQ on 127.0.0.1): %v", err)
			}
			res, err := h.Run(ctx, framework.Selection{LabelFilter: property})
			if cerr := h.Close(); cerr != nil {
				t.Errorf("close: %v", cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Report.Properties) != 1 || len(res.Report.Properties[0].Specs) != 1 {
				t.Fatalf("ran %d properties, want event-under-broker-outage's one spec", len(res.Report.Properties))
			}
			sp := res.Report.Properties[0].Specs[0]
			var kinds []reports.Kind
			for _, a := range sp.Anomalies {
				kinds = append(kinds, a.Kind)
			}
			if sp.Verdict != c.verdict || c.kind != "" && !slices.Contains(kinds, c.kind) {
				t.Errorf("%s with %v, want %s with %s:\n%s\nobserved: %s", sp.Verdict, kinds, c.verdict, c.kind, sp.Failure, sp.Observed)
			}
			for _, s := range c.says {
				if !strings.Contains(sp.Failure+"\n"+sp.Observed, s) {
					t.Errorf("the spec does not say %q:\n%s\nobserved: %s", s, sp.Failure, sp.Observed)
				}
			}
			wantFaultsPaired(t, res.Report, property)
		})
	}
}

// An outage longer than --max-wait skips event-under-broker-outage at run time, saying both
// durations (within, shorter, does not).
func TestEventOutageLongerThanMaxWait(t *testing.T) {
	tg, err := ManagedEvents(EventsSpec{Transport: reference.EventsWebhook, Store: "sqlite", DSN: filepath.Join(t.TempDir(), "api.db"),
		Binary: frameworktest.Binary(t), Within: 2 * time.Second, LockTimeout: 3 * time.Second, Names: "test-outage-skip"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	tg.Operations[0].Publishes[0].Outage = 2 * time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := framework.Open(ctx, tg, framework.WithSettings(framework.Settings{Seed: 31, MaxWait: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.Run(ctx, framework.Selection{LabelFilter: "property:event-under-broker-outage"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Report.Properties[0]
	if want := "event order.created: the broker link would stay cut 2m0s (publishes[].outage), longer than --max-wait 30s"; p.Verdict != reports.Skipped || p.Reason != want {
		t.Errorf("%s (%s), want skipped: %s", p.Verdict, p.Reason, want)
	}
}
