package consumer

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/examples"
)

// These tests run the broker fault properties against the reference queue consumer on the local
// RabbitMQ and NATS JetStream, started by the harness from the managed target files (two
// instances on one queue, SQLite), each on a topology named for the test and deleted after it.
// RETRYSAFE_AMQP_URL and RETRYSAFE_NATS_URL point them at other brokers; RETRYSAFE_BROKER_REPEATS
// runs every spec that many times on one harness (how often a mutant is caught).

// buildBrokerConsumer builds the retrysafe binary the managed consumers run, into a folder of t.
func buildBrokerConsumer(t *testing.T) string { return frameworktest.Binary(t) }

// managedQueueTarget parses the managed target file of transport (amqp, nats) for the reference
// consumer bin with mutant m, on SQLite in a folder of t and a topology named name; with noSink
// the no-sink one (no downstream, test hooks, the id in a header on NATS).
func managedQueueTarget(t *testing.T, bin, transport, name, m string, noSink bool, extra map[string]string) *targets.Target {
	t.Helper()
	doc := map[string][]byte{"amqp": examples.ConsumerAMQPManaged, "nats": examples.ConsumerNATSManaged}[transport]
	if noSink {
		doc = map[string][]byte{"amqp": examples.ConsumerAMQPNoSinkManaged, "nats": examples.ConsumerNATSNoSinkManaged}[transport]
	}
	vars := map[string]string{
		"RETRYSAFE_BIN": bin, "RETRYSAFE_URL": frameworktest.ReservedURLs(t, 2), "RETRYSAFE_REUSE_PORT": "true", "RETRYSAFE_STORE": "sqlite",
		"RETRYSAFE_DSN": filepath.Join(t.TempDir(), "consumer.db"), "RETRYSAFE_MUTANT": orNone(m, "none"),
		"RETRYSAFE_AMQP_EXCHANGE": name + "-x", "RETRYSAFE_AMQP_QUEUE": name + "-q", "RETRYSAFE_AMQP_ROUTING_KEY": name,
		"RETRYSAFE_NATS_STREAM": name, "RETRYSAFE_NATS_SUBJECT": name + ".events", "RETRYSAFE_NATS_DURABLE": name + "-consumer",
	}
	maps.Copy(vars, extra)
	tg, err := targets.Parse("consumer-"+transport+"-managed.yaml", doc, func(k string) (string, bool) {
		if v, ok := vars[k]; ok {
			return v, true
		}
		if k == "RETRYSAFE_AMQP_URL" || k == "RETRYSAFE_NATS_URL" {
			return os.LookupEnv(k)
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func orNone(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// openManagedQueue opens a harness on the managed queue consumer; Close tears it all down.
func openManagedQueue(t *testing.T, bin, transport, m string, noSink bool) (*framework.Harness, *targets.Consumer) {
	t.Helper()
	return openManagedQueueWith(t, bin, transport, m, noSink, nil, framework.Settings{Seed: 11})
}

// openManagedQueueWith is openManagedQueue with extra variables for the target file and the
// run's settings.
func openManagedQueueWith(t *testing.T, bin, transport, m string, noSink bool, extra map[string]string, st framework.Settings) (*framework.Harness, *targets.Consumer) {
	t.Helper()
	name := broker.UniqueName("test-" + transport)
	tg := managedQueueTarget(t, bin, transport, name, m, noSink, extra)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := framework.Open(ctx, tg, framework.WithSettings(st))
	if err != nil {
		t.Fatalf("open the managed %s consumer (these tests need RabbitMQ and NATS JetStream on 127.0.0.1): %v", transport, err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		tg.Close()
		inv, err := brokerInventory(context.Background(), broker.Kind(transport))
		if err != nil {
			t.Errorf("inventory after the test: %v", err)
		} else if left := inv.WithPrefix(name); !left.Empty() {
			t.Errorf("the harness left its topology on the broker: %s", left)
		}
	})
	return h, tg.Consumers[0]
}

// brokerSpec returns the spec of property on c: lost-ack runs lostAckBroker (the lost-ack
// property of lostack.go runs it on brokers), the others are the registry's.
func brokerSpec(t *testing.T, h *framework.Harness, c *targets.Consumer, property string) *Spec {
	t.Helper()
	if property == "lost-ack" {
		p := &Property{Name: "lost-ack", Transports: []targets.Transport{c.Transport}}
		sp := spec(p, c.Name+": the broker link cut before the ack", func(s *S) check.Result { return s.lostAckBroker(c) })
		return sp
	}
	specs, err := h.Specs(framework.Selection{LabelFilter: "property:" + property})
	if err != nil || len(specs) != 1 {
		t.Fatalf("specs of %s: %d, %v", property, len(specs), err)
	}
	if specs[0].Skip != "" {
		t.Fatalf("%s skipped: %s", property, specs[0].Skip)
	}
	return specs[0]
}

// brokerRepeats is how many times each spec runs (RETRYSAFE_BROKER_REPEATS, default 1).
func brokerRepeats(t *testing.T) int {
	n, err := strconv.Atoi(os.Getenv("RETRYSAFE_BROKER_REPEATS"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// kinds returns the distinct anomaly kinds of a result, comma-separated.
func brokerKinds(r check.Result) string {
	var out []string
	for _, a := range r.Anomalies {
		if !slices.Contains(out, string(a.Kind)) {
			out = append(out, string(a.Kind))
		}
	}
	return strings.Join(out, ",")
}

// The correct consumer passes each broker fault property on both brokers, and the mutant each
// exists to catch fails it with the kind it names.
func TestBrokerFaultProperties(t *testing.T) {
	t.Parallel()
	bin := buildBrokerConsumer(t)
	cases := []struct {
		property, mutant string
		want             reports.Kind // "" = pass
		noSink           bool         // the no-sink consumer: lost-ack's silenced link
	}{
		{"crash-before-ack", "", "", false},
		{"crash-before-ack", "no-dedupe", reports.KindDuplicateRecord, false},
		{"crash-after-ack", "", "", false},
		{"crash-after-ack", "ack-before-effect", reports.KindDroppedEvent, false},
		{"lost-ack", "", "", false},
		{"lost-ack", "no-dedupe", reports.KindDuplicateRecord, false},
		{"lost-ack", "", "", true},
		{"lost-ack", "no-dedupe", reports.KindDuplicateRecord, true},
	}
	for _, transport := range []string{"amqp", "nats"} {
		for _, tc := range cases {
			name := transport + "/" + tc.property + "/" + orNone(tc.mutant, "correct")
			if tc.noSink {
				name += "/no-sink"
			}
			t.Run(name, func(t *testing.T) {
				h, c := openManagedQueue(t, bin, transport, tc.mutant, tc.noSink)
				runs, caught := brokerRepeats(t), 0
				for i := range runs {
					out := h.Env().RunSpec(t.Context(), brokerSpec(t, h, c, tc.property))
					got := brokerKinds(out.Result)
					switch {
					case tc.want == "" && out.Verdict() != reports.Pass:
						t.Errorf("run %d: the correct consumer: %s, want pass:\n%s\n%s", i+1, out.Verdict(), out.Message(), brokerNotes(out))
					case tc.want != "" && (out.Verdict() != reports.Fail || got != string(tc.want)):
						t.Errorf("run %d: %s: %s %q, want fail %s:\n%s\n%s", i+1, tc.mutant, out.Verdict(), got, tc.want, out.Message(), brokerNotes(out))
					default:
						caught++
					}
				}
				if runs > 1 {
					t.Logf("%s %s %s: as expected in %d of %d runs", transport, tc.property, orNone(tc.mutant, "correct"), caught, runs)
				}
			})
		}
	}
}

// brokerNotes is an outcome's evidence notes, for a failure message.
func brokerNotes(o *framework.Outcome) string {
	if o.Evidence == nil {
		return ""
	}
	return o.Evidence.Message
}

// A crash-before-ack run shows the kills and the broker's redelivery after them in the history,
// in report.json's faults and on report.html's timeline.
func TestCrashBeforeAckTimeline(t *testing.T) {
	t.Parallel()
	bin := buildBrokerConsumer(t)
	h, c := openManagedQueue(t, bin, "amqp", "", false)
	res, err := h.Run(t.Context(), framework.Selection{LabelFilter: "property:crash-before-ack"})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Report.Verdict(); v != reports.Pass {
		t.Fatalf("verdict %s, want pass", v)
	}
	var killed, redelivered time.Time
	target := framework.BrokerTarget(c)
	for _, ev := range h.Env().History.Events() {
		switch {
		case ev.Action == "inject" && ev.Kind == "kill" && killed.IsZero():
			killed = ev.At
		case ev.Action == actionObserve && ev.Kind == kindBrokerRedelivery && ev.Target == target:
			redelivered = ev.At
			if !strings.Contains(ev.Fault, "redelivered the 4 messages") {
				t.Errorf("redelivery event says %q, want the 4 messages the kill left", ev.Fault)
			}
		}
	}
	if killed.IsZero() || redelivered.IsZero() || !redelivered.After(killed) {
		t.Fatalf("history: kill at %v, redelivery at %v; want a kill, then the redelivery:\n%v", killed, redelivered, h.Env().History.Events())
	}
	found := map[string]bool{}
	for _, f := range res.Report.Faults {
		found[f.Action+" "+f.Kind] = true
	}
	if !found["inject kill"] || !found["observe broker-redelivery"] || !found["inject timeout"] {
		t.Errorf("report.json faults %v lack the silenced link, the kill or the redelivery", found)
	}
	var page bytes.Buffer
	if err := reports.RenderHTML(&page, res.Report, res.HTML); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"inject kill (instance 0)", "inject kill (instance 1)", "observe broker-redelivery (" + target + ")"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html's timeline lacks %q", want)
		}
	}
}
