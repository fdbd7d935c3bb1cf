package check

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/history"
)

// at is seconds after t0.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// fault is a fault of kind on target injected at from and healed at to (seconds after t0; to < 0:
// never healed), as the history records it.
func fault(kind, target string, from, to float64) []history.Event {
	name := kind + " " + target
	out := []history.Event{{At: at(from), Action: "inject", Kind: kind, Target: target, Fault: name}}
	if to >= 0 {
		out = append(out, history.Event{At: at(to), Action: "heal", Kind: kind, Target: target, Fault: name})
	}
	return out
}

// withFaults is ev with the history's fault events.
func withFaults(ev Events, faults ...[]history.Event) Events {
	for _, f := range faults {
		ev.Faults = append(ev.Faults, f...)
	}
	return ev
}

// An event-new-id names the cause the history shows, one row per cause (and the near misses that
// show none): a publication before the commit, a republication for a replay, the relay's new id
// after a lost confirm or a kill, and a cause not visible.
func TestEventNewIDCauses(t *testing.T) {
	created := `{"id":"ord_1"}`
	tests := []struct {
		name  string
		check func([]EventOp, Events) Result
		op    EventOp
		ev    Events
		want  string
		cause string
	}{
		{name: "before the commit: an id observed while an attempt that failed was in flight", check: EventUnderBrokerOutage,
			op: op(sent(1, 503, `{}`), sent(2, 201, created)), ev: seen(9, evt(10, "evt_a", "r1", 1.005), evt(11, "evt_b", "r1", 2.005)),
			want: "event-new-id seqs=2,10,11",
			cause: "cause: a publication before the commit (evt_a was observed at 03:04:06.004, before #2, the first attempt that may have committed, began: " +
				"it was published for #1, which failed (503))"},
		{name: "before the commit: an id observed before the 2xx's attempt began", check: EventAfterCrash,
			op: op(sent(1, 409, `{}`), sent(3, 201, created)), ev: seen(9, evt(10, "evt_a", "r1", 2), evt(11, "evt_b", "r1", 3.005)),
			want: "event-new-id seqs=3,10,11", cause: "cause: a publication before the commit (evt_a was observed at 03:04:07.000, before #3"},
		{name: "a republication for a replay", check: EventPerRecord,
			op: op(sent(1, 201, created), sent(2, 201, created)), ev: seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r1", 2.005)),
			want: "event-new-id seqs=1,10,11", cause: "cause: a republication for a replay (evt_b was first observed at 03:04:07.005, after the replay #2 of the 2xx #1 began)"},
		{name: "the relay's new id after a lost confirm", check: EventUnderBrokerOutage, op: op(sent(1, 201, created)),
			ev:   withFaults(seen(9, evt(10, "evt_a", "r1", 1.2), evt(11, "evt_b", "r1", 2)), fault("lose-confirm", "events-broker", 0.9, 1.6)),
			want: "event-new-id seqs=1,10,11", cause: "cause: the relay's new id (evt_b was first observed at 03:04:07.000, after the lost confirm (the broker's answers cut at 03:04:05.900), and evt_a at 03:04:06.200)"},
		{name: "the relay's new id after a kill", check: EventAfterCrash, op: op(sent(1, 201, created)),
			ev:   withFaults(seen(9, evt(10, "evt_a", "r1", 1.2), evt(11, "evt_b", "r1", 2)), fault("kill", "instance 0", 1.5, 1.8)),
			want: "event-new-id seqs=1,10,11", cause: "cause: the relay's new id (evt_b was first observed at 03:04:07.000, after the kill of instance 0 at 03:04:06.500"},
		{name: "not visible: the kill and its restart came before both ids", check: EventAfterCrash, op: op(sent(1, 201, created)),
			ev:   withFaults(seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r1", 1.6)), fault("kill", "instance 0", 1.02, 1.1)),
			want: "event-new-id seqs=1,10,11", cause: "cause: cause not visible"},
		{name: "not visible: no fault, no replay, nothing failed", check: EventPerRecord, op: op(sent(1, 201, created)),
			ev: seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r1", 1.6)), want: "event-new-id seqs=1,10,11", cause: "cause: cause not visible"},
		{name: "not visible: never acknowledged, two ids", check: EventUnderBrokerOutage, op: op(noAnswer(1)),
			ev: seen(9, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r1", 1.6)), want: "event-new-id seqs=10,11", cause: "cause: cause not visible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, tt.check([]EventOp{tt.op}, tt.ev), reports.Fail, []string{tt.want}, tt.cause)
		})
	}
}

// A missing event names the cause the history shows: acknowledged while the broker link was cut,
// a kill between its 2xx and its publication, or a cause not visible.
func TestMissingEventCauses(t *testing.T) {
	acked := op(sent(1, 201, `{"id":"ord_1"}`))
	tests := []struct {
		name  string
		check func([]EventOp, Events) Result
		ev    Events
		cause string
	}{
		{name: "acknowledged while the link was cut", check: EventUnderBrokerOutage,
			ev:    withFaults(resumed(seen(9), 3, "the heal of the broker link"), fault("cut-broker-link", "events-broker", 0.5, 3)),
			cause: "cause: a publication lost to the broker link's cut (acknowledged at 03:04:06.010 while the link was cut, it was not published after the heal"},
		{name: "a kill after its 2xx", check: EventAfterCrash,
			ev:    withFaults(resumed(seen(9), 1.7, "the restart after the last kill"), fault("kill", "instance 0", 1.5, 1.7)),
			cause: "cause: a kill between its commit and its publication (the kill of instance 0 at 03:04:06.500 came after the 2xx #1 and before the event)"},
		{name: "not visible: the link was cut and healed before the 2xx", check: EventUnderBrokerOutage,
			ev:    withFaults(seen(9), fault("cut-broker-link", "events-broker", 0.2, 0.5)),
			cause: "cause: cause not visible"},
		{name: "not visible: the kill came before the 2xx", check: EventAfterCrash,
			ev:    withFaults(seen(9), fault("kill", "instance 0", 0.5, 0.8)),
			cause: "cause: cause not visible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, tt.check([]EventOp{acked}, tt.ev), reports.Fail, []string{"missing-event seqs=1"}, tt.cause)
		})
	}
}

// A ghost event names the cause the history shows: observed while an attempt that then failed
// was in flight, published for a request that was rejected, or a cause not visible. After
// faults, an event that names no record of the spec is a ghost only when every attempt was
// answered.
func TestGhostEventCauses(t *testing.T) {
	failed := op(sent(1, 503, `{}`))
	failed.Ties = nil
	byRecord := func(ev Events) Events {
		ev.ByRecord = true
		return ev
	}
	expect(t, EventUnderBrokerOutage([]EventOp{failed}, byRecord(seen(9, evt(10, "evt_g", "ord_9", 1.005)))), reports.Fail,
		[]string{"ghost-event seqs=10"},
		"cause: a publication before the commit (it was observed at 03:04:06.004 while #1 of orders ref r1 was in flight, which then failed (503))")
	expect(t, EventUnderBrokerOutage([]EventOp{failed}, byRecord(seen(9, evt(10, "evt_g", "ord_9", 4)))), reports.Fail,
		[]string{"ghost-event seqs=10"}, "cause: cause not visible")
	lost := op(noAnswer(1))
	lost.Ties = nil
	expect(t, EventAfterCrash([]EventOp{lost}, killed(byRecord(seen(9, evt(10, "evt_g", "ord_9", 1.5))))), reports.Pass, nil)

	expect(t, EventPerRecord([]EventOp{rejected(4)}, seen(9, evt(11, "evt_r", "r9", 4.005))), reports.Fail, []string{"ghost-event seqs=11"},
		"r9 was rejected and published order.created evt_r: an event tied to no record; cause: a publication before the commit (evt_r was observed at 03:04:09.005, "+
			"and no attempt may have committed: it was published for #4, which failed (400))")
	noRecord := withRecords(op(sent(1, 503, `{}`)), 0)
	expect(t, EventUnderBrokerOutage([]EventOp{noRecord}, seen(9, evt(10, "evt_g", "r1", 1.005))), reports.Fail, []string{"ghost-event seqs=10"},
		"left no record and published order.created evt_g")
}

// A step that exercised nothing makes the spec unknown with its sentence, never a pass; an
// anomaly seen in any step stays a failure; a pass says every step's note.
func TestEventSteps(t *testing.T) {
	acked := op(sent(1, 201, `{"id":"ord_1"}`))
	lost := Step{Name: "the lost confirm", Note: "the broker took no event of orders ref r1 while its answers were cut"}
	cut := Step{Name: "the cut of the broker link", Exercised: true, Note: "3 of 3 operations acknowledged while it was cut"}
	ev := seen(9, evt(10, "evt_a", "r1", 1.5))
	ev.Steps = []Step{lost, cut}
	res := EventUnderBrokerOutage([]EventOp{acked}, ev)
	expect(t, res, reports.Unknown, nil, "the lost confirm exercised nothing: the broker took no event of orders ref r1 while its answers were cut")

	ev.Seen = append(ev.Seen, evt(11, "evt_b", "r1", 1.6))
	res = EventUnderBrokerOutage([]EventOp{acked}, ev)
	expect(t, res, reports.Fail, []string{"event-new-id seqs=1,10,11"})
	if len(res.Observed) != 2 || !strings.HasPrefix(res.Observed[0], "the lost confirm exercised nothing: ") {
		t.Errorf("a failure's steps observed %q, want both, the first one that exercised nothing", res.Observed)
	}

	lost.Exercised, lost.Note = true, "1 confirm lost"
	ev = seen(9, evt(10, "evt_a", "r1", 1.5))
	ev.Steps = []Step{lost, cut}
	res = EventUnderBrokerOutage([]EventOp{acked}, ev)
	expect(t, res, reports.Pass, nil)
	want := []string{"the lost confirm: 1 confirm lost", "the cut of the broker link: 3 of 3 operations acknowledged while it was cut"}
	if !slices.Equal(res.Observed, want) {
		t.Errorf("observed %q, want %q", res.Observed, want)
	}
	kills := Step{Name: "the kill inside the hold", Note: "the hold_publish hook held no publication"}
	ev.Steps = []Step{kills}
	if res := EventAfterCrash([]EventOp{acked}, ev); res.Verdict() != reports.Unknown || !strings.Contains(res.Message(), "the kill inside the hold exercised nothing") {
		t.Errorf("event-after-crash with a step that exercised nothing: %s: %s", res.Verdict(), res.Message())
	}
}

// A fault the harness could not heal (a restart, a heal, a release that failed) may have kept
// the API from publishing: an event that did not come in time is unknown then, never missing; a
// second id still fails the spec.
func TestUnhealedFaultLeavesMissingUnknown(t *testing.T) {
	acked := op(sent(1, 201, `{"id":"ord_1"}`))
	restart := Step{Name: "the kill inside the hold", Note: "the nemesis could not restart an instance after the kill inside the hold: timeout", Unhealed: true}
	for name, ev := range map[string]Events{
		"none":     seen(20),
		"too late": seen(20, evt(10, "evt_a", "r1", 19)),
	} {
		t.Run(name, func(t *testing.T) {
			expect(t, EventAfterCrash([]EventOp{acked}, killed(ev)), reports.Fail, []string{"missing-event seqs=1" + map[string]string{"too late": ",10"}[name]})
			ev.Steps = []Step{restart}
			expect(t, EventAfterCrash([]EventOp{acked}, killed(ev)), reports.Unknown, nil,
				"no event order.created within 2s after its 2xx (#1), but the harness could not heal its fault (the nemesis could not restart an instance")
		})
	}
	ev := seen(20, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r1", 1.6))
	ev.Steps = []Step{restart}
	expect(t, EventAfterCrash([]EventOp{acked}, killed(ev)), reports.Fail, []string{"event-new-id seqs=1,10,11"})
}

// A spec waits for the events of its acknowledged operations that are not in yet, until the
// latest is due.
func TestAwaiting(t *testing.T) {
	a, b := op(sent(1, 201, `{}`)), op(sent(3, 201, `{}`))
	b.Ref, b.Ties = "r2", []string{"r2"}
	never := op(noAnswer(5))
	never.Ref, never.Ties = "r3", []string{"r3"}
	tests := []struct {
		name    string
		ev      Events
		missing int
		until   time.Time
	}{
		{name: "none in", ev: seen(4), missing: 2, until: at(3.01).Add(within)},
		{name: "one in", ev: seen(4, evt(10, "evt_b", "r2", 3.5)), missing: 1, until: at(1.01).Add(within)},
		{name: "an event that cannot be read counts for nothing", ev: seen(4, evt(10, "evt_a", "r1", 1.5), Event{Seq: 11, Tie: "r2", Err: "no id"}),
			missing: 1, until: at(3.01).Add(within)},
		{name: "all in", ev: seen(4, evt(10, "evt_a", "r1", 1.5), evt(11, "evt_b", "r2", 3.5)), missing: 0},
		{name: "due after the heal", ev: resumed(seen(4, evt(10, "evt_a", "r1", 1.5)), 6, "the heal of the broker link"), missing: 1,
			until: at(6).Add(within)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			missing, until := Awaiting([]EventOp{a, b, never}, tt.ev)
			if missing != tt.missing || !until.Equal(tt.until) {
				t.Errorf("Awaiting = %d, %v; want %d, %v", missing, until, tt.missing, tt.until)
			}
		})
	}
}

// The kills of event-after-crash exercised what they name when one came with an attempt in
// flight; a pass says how many came between an operation's 2xx and its event.
func TestCrashKillsStep(t *testing.T) {
	acked := op(sent(1, 201, `{"id":"ord_1"}`))
	ev := withFaults(seen(9, evt(10, "evt_a", "r1", 3)), fault("kill", "instance 0", 1.005, 1.006), fault("kill", "instance 0", 2, 2.5))
	res := EventAfterCrash([]EventOp{acked}, ev)
	expect(t, res, reports.Pass, nil)
	if want := []string{"the kills: 2 kills, 1 with an attempt in flight, 1 between an acknowledged operation's 2xx and its event (its commit and its publication)"}; !slices.Equal(res.Observed, want) {
		t.Errorf("observed %q, want %q", res.Observed, want)
	}
	ev = withFaults(seen(9, evt(10, "evt_a", "r1", 1.5)), fault("kill", "instance 0", 2, 2.5))
	expect(t, EventAfterCrash([]EventOp{acked}, ev), reports.Unknown, nil, "the kills exercised nothing: 1 kills, none with an attempt in flight")
}
