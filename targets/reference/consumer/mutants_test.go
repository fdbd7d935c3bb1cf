package consumer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/webhook"
)

// mutantCase is the HTTP-level scenario that shows one mutant's bug. show runs it on a
// fresh rig and reports whether the bug was observed, with what it saw. The same scenario
// runs against the mutant (the bug must show) and against the correct consumer (it must
// not), so the test fails if either the mutant stops being broken or the scenario stops
// being able to tell.
type mutantCase struct {
	opts rigOpts // mutant is set by the test
	show func(t *testing.T, r *rig) (bool, string)
}

func mutantCases() map[Mutant]mutantCase {
	stripe := rigOpts{signing: signingConfigs["stripe"]}
	standard := rigOpts{signing: signingConfigs["standard-webhooks"]}
	return map[Mutant]mutantCase{
		MutantNoDedupe:                {rigOpts{}, showNoDedupe},
		MutantPayloadDedupe:           {rigOpts{}, showPayloadDedupe},
		MutantCheckThenInsert:         {rigOpts{}, showCheckThenInsert},
		MutantClaimBeforeEffect:       {rigOpts{}, showClaimBeforeEffect},
		MutantMarksSeenOnFailure:      {rigOpts{}, showMarksSeenOnFailure},
		MutantOrderBlind:              {rigOpts{}, showOrderBlind},
		MutantNoSignatureCheck:        {stripe, showNoSignatureCheck},
		MutantStaleTimestampAccepted:  {standard, showStaleTimestampAccepted},
		MutantDedupeForgetsEarly:      {rigOpts{}, showDedupeForgetsEarly},
		MutantInMemoryDedupe:          {rigOpts{}, showInMemoryDedupe},
		MutantMarkAfterEffect:         {rigOpts{hooks: true, noDownstream: true}, showMarkAfterEffect},
		MutantRawBytesDedupe:          {rigOpts{}, showRawBytesDedupe},
		MutantFutureTimestampAccepted: {standard, showFutureTimestampAccepted},
		MutantFailsAfterEffect:        {rigOpts{hooks: true, noDownstream: true}, showFailsAfterEffect},
		MutantMessageIDDedupe:         {rigOpts{}, showMessageIDDedupe},
		MutantFirstOperationOnly:      {rigOpts{}, showFirstOperationOnly},
	}
}

// showMessageIDDedupe delivers two messages (two ids) of one business operation: the correct
// consumer applies it once.
func showMessageIDDedupe(t *testing.T, r *rig) (bool, string) {
	a := r.deliver(opEvent("evt_m1", "obj_1", 1, "pay_1"))
	b := r.deliver(opEvent("evt_m2", "obj_1", 1, "pay_1"))
	n := r.opEffects("pay_1")
	return n > 1, fmt.Sprintf("operation pay_1 took effect %d times after two messages naming it (%s, %s)", n, a.str("status"), b.str("status"))
}

// showFirstOperationOnly delivers one message naming three operations: the correct consumer
// applies each.
func showFirstOperationOnly(t *testing.T, r *rig) (bool, string) {
	a := r.deliver(opEvent("evt_f1", "obj_1", 1, "item_1", "item_2", "item_3"))
	counts := []int{r.opEffects("item_1"), r.opEffects("item_2"), r.opEffects("item_3")}
	return slices.Contains(counts, 0), fmt.Sprintf("the message naming three operations was %s; their effects %v", a.str("status"), counts)
}

// TestMutantsShowTheirBugs runs every webhook mutant's scenario on every store in its
// Stores list (the bug must show) and the same scenario on the correct consumer on those
// stores (the bug must not show). Stores run in parallel with each other.
func TestMutantsShowTheirBugs(t *testing.T) {
	cases := mutantCases()
	for _, info := range Mutants {
		if _, ok := cases[info.Name]; !ok && info.AppliesToTransport(TransportWebhook) {
			t.Errorf("webhook mutant %s has no HTTP-level scenario", info.Name)
		}
	}
	for _, store := range AllStores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			for _, info := range Mutants {
				c, ok := cases[info.Name]
				if !ok || !info.AppliesTo(store) {
					continue
				}
				t.Run(string(info.Name), func(t *testing.T) {
					for _, mutant := range []Mutant{info.Name, MutantNone} {
						o := c.opts
						o.mutant = mutant
						bug, saw := c.show(t, newRig(t, newBackend(t, store), o))
						t.Logf("%s: %s", o.mutant.orCorrect(), saw)
						switch {
						case mutant != MutantNone && !bug:
							t.Errorf("mutant %s on %s does not show its bug (%s): %s", info.Name, store, info.Bug, saw)
						case mutant == MutantNone && bug:
							t.Errorf("the correct consumer on %s shows the bug of %s: %s", store, info.Name, saw)
						}
					}
				})
			}
		})
	}
}

// orCorrect names a mutant in logs.
func (m Mutant) orCorrect() string {
	if m == MutantNone {
		return "correct"
	}
	return string(m)
}

func showNoDedupe(t *testing.T, r *rig) (bool, string) {
	body := event("evt_nd", "obj_1", 1)
	first, second := r.deliver(body), r.deliver(body)
	n := r.effects("evt_nd")
	return n > 1, fmt.Sprintf("%d effects after two deliveries (%s, %s)", n, first.str("status"), second.str("status"))
}

func showPayloadDedupe(t *testing.T, r *rig) (bool, string) {
	r.deliver(event("evt_p1", "obj_1", 1))
	a := r.deliver(event("evt_p2", "obj_1", 1))
	n := r.effects("evt_p2")
	return n == 0, fmt.Sprintf("the second event, same body but its id, was %d %s with %d effects", a.status, a.str("status"), n)
}

// showCheckThenInsert holds the downstream, so that no delivery can complete, and sends 16
// concurrent deliveries: a correct consumer lets one through (15 answered 409 at once); a
// check-then-insert one lets them all reach the downstream.
func showCheckThenInsert(t *testing.T, r *rig) (bool, string) {
	const n = 16
	body := event("evt_cti", "obj_1", 1)
	r.sink.Hold()
	type result struct {
		a   answer
		err error
	}
	results, start := make(chan result, n), make(chan struct{})
	for range n {
		go func() {
			<-start
			a, err := r.send(body)
			results <- result{a, err}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	twoHeld := make(chan error, 1)
	go func() { _, err := r.sink.WaitHeld(ctx, 2); twoHeld <- err }()
	close(start)
	answered := 0
	for waiting := true; waiting && answered < n-1; {
		select {
		case res := <-results:
			if res.err != nil {
				t.Fatal(res.err)
			}
			answered++
		case <-twoHeld:
			waiting = false
		}
	}
	held := len(r.sink.Held())
	r.sink.Release()
	for ; answered < n; answered++ {
		if res := <-results; res.err != nil {
			t.Fatal(res.err)
		}
	}
	effects := r.effects("evt_cti")
	return effects > 1, fmt.Sprintf("%d deliveries reached the held downstream; %d effects from %d concurrent deliveries", held, effects, n)
}

// showClaimBeforeEffect crashes the consumer while its downstream call is held (its store
// is closed under it, so nothing it writes afterwards lands), restarts it on the same
// store and redelivers after the lock timeout: a correct consumer takes the claim over and
// applies the event; the mutant acknowledges it as a duplicate with no effect.
func showClaimBeforeEffect(t *testing.T, r *rig) (bool, string) {
	body := event("evt_crash", "obj_1", 1)
	r.sink.Hold()
	dead := make(chan answer, 1)
	go func() { a, _ := r.send(body); dead <- a }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := r.sink.WaitHeld(ctx, 1); err != nil {
		t.Fatalf("the delivery never reached the downstream: %v", err)
	}
	r.store.Close() // the crash: this instance's later writes fail
	r.sink.Release()
	crashed := <-dead
	r.restart()
	early := r.deliver(body)
	r.clock.Advance(31 * time.Second) // past the lock timeout
	late := r.deliver(body)
	n := r.effects("evt_crash")
	return n == 0, fmt.Sprintf("crashed delivery %d; redelivery before the lock timeout %d %s, after it %d %s; %d effects",
		crashed.status, early.status, early.str("status"), late.status, late.str("status"), n)
}

func showMarksSeenOnFailure(t *testing.T, r *rig) (bool, string) {
	body := event("evt_ms", "obj_1", 1)
	r.sink.FailNext(1, http.StatusServiceUnavailable)
	first := r.deliver(body)
	second := r.deliver(body)
	n := r.effects("evt_ms")
	return n == 0, fmt.Sprintf("failed delivery %d, redelivery %d %s, %d effects", first.status, second.status, second.str("status"), n)
}

// showFailsAfterEffect fails an event's first handling after its effect (the X-Test-Fail
// header's after-effect point) and redelivers it without the header: the mutant gave its claim
// back, so the redelivery applies the event again.
func showFailsAfterEffect(t *testing.T, r *rig) (bool, string) {
	body := event("evt_fae", "obj_1", 1)
	first, err := r.sendWith(body, http.Header{FailHeader: {FailAfterEffect}})
	if err != nil {
		t.Fatal(err)
	}
	second := r.deliver(body)
	n := r.effects("evt_fae")
	return n > 1, fmt.Sprintf("delivery failed after its effect %d, redelivery %d %s, %d effects", first.status, second.status, second.str("status"), n)
}

func showOrderBlind(t *testing.T, r *rig) (bool, string) {
	r.deliver(event("evt_ob3", "obj_ob", 3))
	r.deliver(event("evt_ob1", "obj_ob", 1))
	v := r.version("obj_ob")
	return v != 3, fmt.Sprintf("version 3 then version 1 delivered: obj_ob at version %d", v)
}

func showNoSignatureCheck(t *testing.T, r *rig) (bool, string) {
	body := event("evt_nsc", "obj_1", 1)
	h, _ := r.signer.SignWrong("evt_nsc", r.clock.Now(), body)
	wrong := r.post(body, h)
	unsigned := r.post(event("evt_nsc2", "obj_1", 1), nil)
	n := r.effects("evt_nsc") + r.effects("evt_nsc2")
	return n > 0, fmt.Sprintf("wrong signature %d, unsigned %d, %d effects", wrong.status, unsigned.status, n)
}

func showStaleTimestampAccepted(t *testing.T, r *rig) (bool, string) {
	body := event("evt_sta", "obj_1", 1)
	h, _ := r.signer.Sign("evt_sta", r.clock.Now().Add(-time.Hour), body)
	a := r.post(body, h)
	n := r.effects("evt_sta")
	return n > 0, fmt.Sprintf("a delivery signed an hour ago was %d with %d effects", a.status, n)
}

func showDedupeForgetsEarly(t *testing.T, r *rig) (bool, string) {
	body := event("evt_dfe", "obj_1", 1)
	r.deliver(body)
	r.clock.Advance(2 * time.Second) // well within the 72-hour retention
	a := r.deliver(body)
	n := r.effects("evt_dfe")
	return n > 1, fmt.Sprintf("redelivery 2 s later: %d %s, %d effects", a.status, a.str("status"), n)
}

// TestAckBeforeEffectDeliverIsCorrect: ack-before-effect lives in the queue transports;
// Deliver itself deduplicates as the correct consumer does.
func TestAckBeforeEffectDeliverIsCorrect(t *testing.T) {
	info, _ := MutantAckBeforeEffect.Info()
	if info.AppliesToTransport(TransportWebhook) || !info.AppliesToTransport(TransportAMQP) || !info.AppliesToTransport(TransportNATS) {
		t.Errorf("ack-before-effect transports = %v, want amqp and nats only", info.Transports)
	}
	store := NewMemoryStore()
	c, err := New(Config{Store: store, Mutant: MutantAckBeforeEffect, WorkDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := Delivery{ID: "msg_1", Body: event("evt_body", "obj_1", 1)}
	got := []OutcomeKind{c.Deliver(context.Background(), d).Kind, c.Deliver(context.Background(), d).Kind}
	if !slices.Equal(got, []OutcomeKind{Processed, Duplicate}) {
		t.Errorf("outcomes = %v, want processed then duplicate", got)
	}
	if list, _ := store.Effects(context.Background(), EffectFilter{Event: "msg_1"}); len(list) != 1 {
		t.Errorf("effects = %+v, want one", list)
	}
}

func TestMutantTable(t *testing.T) {
	seen := map[Mutant]bool{}
	for _, info := range Mutants {
		if seen[info.Name] {
			t.Errorf("mutant %s listed twice", info.Name)
		}
		seen[info.Name] = true
		if info.Bug == "" || len(info.Caught) == 0 || len(info.Stores) == 0 || len(info.Transports) == 0 {
			t.Errorf("mutant %s has an incomplete row: %+v", info.Name, info)
		}
		for _, tr := range info.Transports {
			if len(info.CatchesOn(tr)) == 0 {
				t.Errorf("mutant %s: no property catches it on %s", info.Name, tr)
			}
		}
		for _, c := range info.Caught {
			if c.Property == "" || !slices.Contains(Shapes, c.Shape) {
				t.Errorf("mutant %s: incomplete catch %+v", info.Name, c)
			}
			for _, tr := range c.Transports {
				if !info.AppliesToTransport(tr) {
					t.Errorf("mutant %s: caught by %s on %s, a transport it does not apply to", info.Name, c.Property, tr)
				}
			}
		}
		if got, err := ParseMutant(string(info.Name)); got != info.Name || err != nil {
			t.Errorf("ParseMutant(%q) = %q, %v", info.Name, got, err)
		}
	}
	if info, _ := MutantClaimBeforeEffect.Info(); info.AppliesTo("memory") {
		t.Error("claim-before-effect needs a durable store, but applies to memory")
	}
	if _, err := ParseMutant("race"); err == nil || !strings.Contains(err.Error(), "no-dedupe") {
		t.Errorf("ParseMutant(race) error = %v, want the known names", err)
	}
	if m, err := ParseMutant("none"); m != MutantNone || err != nil {
		t.Errorf("ParseMutant(none) = %q, %v", m, err)
	}
	if _, err := New(Config{Store: NewMemoryStore(), Mutant: "nope"}); err == nil {
		t.Error("New accepted an unknown mutant")
	}
	if _, err := New(Config{Store: NewMemoryStore(), Signing: webhook.Config{Scheme: "stripe"}}); err == nil {
		t.Error("New accepted a stripe scheme without a secret")
	}
}

// showInMemoryDedupe delivers an event, restarts the consumer on the same store and delivers it
// again: the mutant forgot it with its process.
func showInMemoryDedupe(t *testing.T, r *rig) (bool, string) {
	body := event("evt_imd", "obj_1", 1)
	first := r.deliver(body)
	r.restart()
	again := r.deliver(body)
	n := r.effects("evt_imd")
	return n > 1, fmt.Sprintf("delivered %d, redelivered after a restart %d %s: %d effects", first.status, again.status, again.str("status"), n)
}

// showMarkAfterEffect slows one handling (the slow hook), crashes the consumer once the
// event's effect shows (its store is closed under it), restarts it and redelivers after the
// lock timeout: the mutant's effect committed without its mark, so the redelivery applies it
// again; the correct consumer commits both at once.
func showMarkAfterEffect(t *testing.T, r *rig) (bool, string) {
	body := event("evt_mae", "obj_1", 1)
	dead := make(chan answer, 1)
	go func() { a, _ := r.sendWith(body, http.Header{DelayHeader: {"400"}}); dead <- a }()
	deadline := time.Now().Add(5 * time.Second)
	for r.effects("evt_mae") == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r.store.Close() // the crash: this instance's later writes fail
	crashed := <-dead
	r.restart()
	r.clock.Advance(31 * time.Second) // past the lock timeout
	again := r.deliver(body)
	n := r.effects("evt_mae")
	return n > 1, fmt.Sprintf("crashed delivery %d once its effect showed; redelivery %d %s: %d effects", crashed.status, again.status, again.str("status"), n)
}

// showRawBytesDedupe delivers an event, then the same event re-encoded (keys reordered,
// whitespace): the mutant keys on the raw bytes.
func showRawBytesDedupe(t *testing.T, r *rig) (bool, string) {
	body := event("evt_rb", "obj_1", 1)
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	reencoded, _ := json.MarshalIndent(v, "", "   ") // sorted keys, other whitespace
	r.deliver(body)
	a := r.deliver(reencoded)
	n := r.effects("evt_rb")
	return n > 1, fmt.Sprintf("the re-encoded redelivery was %d %s: %d effects", a.status, a.str("status"), n)
}

func showFutureTimestampAccepted(t *testing.T, r *rig) (bool, string) {
	body := event("evt_fta", "obj_1", 1)
	h, _ := r.signer.Sign("evt_fta", r.clock.Now().Add(time.Hour), body)
	a := r.post(body, h)
	n := r.effects("evt_fta")
	return n > 0, fmt.Sprintf("a delivery signed an hour ahead was %d with %d effects", a.status, n)
}
