package consumer

import (
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// A JetStream consumer whose durable has the server's default AckWait (30 s, set by the consumer
// that creates it; the harness reads it from the server) is judged under the default
// --max-redelivery-wait: crash-before-ack waits for the broker's redelivery, 30 s after the
// deliveries, and catches a consumer that applies an event again after a restart (the duplicate
// a fixed 10 s wait missed). Under --max-redelivery-wait 20s the spec is skipped with the derived
// duration, the bound and the flag.
func TestCrashBeforeAckOnTheBrokersClock(t *testing.T) {
	t.Parallel()
	bin := buildBrokerConsumer(t)
	extra := map[string]string{"RETRYSAFE_CREATE_DURABLE": "false", "RETRYSAFE_ACK_WAIT": "30s"}
	h, c := openManagedQueueWith(t, bin, "nats", "in-memory-dedupe", true, extra, framework.Settings{Seed: 11})
	if got := h.Env().Redelivery(c).Step; got != 30*time.Second {
		t.Fatalf("the redelivery clock's step is %v, want the durable's AckWait 30s as the server reports it", got)
	}
	sp := brokerSpec(t, h, c, "crash-before-ack") // fails the test when skipped
	start := time.Now()
	out := h.Env().RunSpec(t.Context(), sp)
	if out.Verdict() != reports.Fail || brokerKinds(out.Result) != string(reports.KindDuplicateRecord) {
		t.Fatalf("in-memory-dedupe: %s %q, want fail duplicate-record:\n%s\n%s", out.Verdict(), brokerKinds(out.Result), out.Message(), brokerNotes(out))
	}
	if took := time.Since(start); took < 30*time.Second {
		t.Errorf("the spec ended after %v, before the broker's AckWait could have passed", took)
	}

	h.Env().Settings.MaxRedeliveryWait = 20 * time.Second
	specs, err := h.Specs(framework.Selection{LabelFilter: "property:crash-before-ack"})
	if err != nil || len(specs) != 1 {
		t.Fatalf("specs: %d, %v", len(specs), err)
	}
	for _, want := range []string{"36s", "JetStream AckWait 30s, as the server reports it", "--max-redelivery-wait 20s"} {
		if !strings.Contains(specs[0].Skip, want) {
			t.Errorf("under --max-redelivery-wait 20s the skip reason %q does not say %q", specs[0].Skip, want)
		}
	}
}
