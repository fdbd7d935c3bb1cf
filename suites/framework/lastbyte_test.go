package framework_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/reference"
)

func TestLastByteBurst(t *testing.T) {
	e := frameworktest.RefEnv(t, reference.MutantNone, 1, framework.Settings{})
	if got := framework.RaceModeOf(e.Env); got != framework.RaceModeLastByte {
		t.Fatalf("race mode of an http target = %q, want %q", got, framework.RaceModeLastByte)
	}
	op := e.NewOp(e.Target.Operations[0])
	atts := e.Burst(op, 16)
	statuses := map[string]int{}
	for _, a := range atts {
		statuses[strconv.Itoa(a.Status)+a.RespHeader.Get("Idempotent-Replayed")]++
		if a.Seq == 0 || a.Outcome != history.OK || !strings.Contains(a.Note, "last-byte") {
			t.Fatalf("attempt not recorded as a last-byte answer: %s", a)
		}
		// The server read the body after the release, never before: the final byte was held.
		at, err := strconv.ParseInt(a.RespHeader.Get(framework.ArrivalHeader), 10, 64)
		if err != nil || at < a.Start.UnixNano() {
			t.Errorf("body read at %d, before the release at %d", at, a.Start.UnixNano())
		}
	}
	// One execution; the others arrived while it ran (409) or after (a replay).
	if statuses["201"] != 1 || statuses["409"]+statuses["201true"] != 15 {
		t.Errorf("statuses %v, want one 201 and fifteen 409s or replays", statuses)
	}
	if _, err := framework.ArrivalSpread(atts); err != nil {
		t.Error(err)
	}
	if n := len(e.History.ByKey(op.Key)); n != 16 {
		t.Errorf("%d attempts of the key in the history, want 16", n)
	}
	e.Settings.RaceMode = framework.RaceModeBarrier
	if got := framework.RaceModeOf(e.Env); got != framework.RaceModeBarrier {
		t.Errorf("race mode = %q, want the barrier when asked", got)
	}
	if atts := e.Burst(e.NewOp(e.Target.Operations[0]), 4); len(atts) != 4 || atts[0].RespHeader.Get(framework.ArrivalHeader) == "" {
		t.Errorf("barrier burst: %d answers, arrival %q", len(atts), atts[0].RespHeader.Get(framework.ArrivalHeader))
	}
}

func TestWireRequest(t *testing.T) {
	e := frameworktest.RefEnv(t, reference.MutantNone, 1, framework.Settings{})
	rc, err := framework.PrepareRaw(e, t.Context(), e.NewOp(e.Target.Operations[0]), 0)
	if err != nil {
		t.Fatal(err)
	}
	wire := string(rc.Wire)
	for _, want := range []string{"POST /v1/orders HTTP/1.1\r\nHost: 127.0.0.1:", "\r\nIdempotency-Key: ", "\r\nX-Retrysafe-Arrival: 1\r\n",
		"\r\nContent-Length: " + strconv.Itoa(len(rc.Body)) + "\r\n\r\n{"} {
		if !strings.Contains(wire, want) {
			t.Errorf("wire form lacks %q:\n%s", want, wire)
		}
	}
	if !strings.HasSuffix(wire, string(rc.Body)) {
		t.Errorf("wire form does not end with the body:\n%s", wire)
	}
}
