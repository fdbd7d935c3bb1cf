package suites

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// replay: the same request sent N times in sequence.
//
// The target MUST answer every retry with the first answer (status and body, volatile
// fields ignored), mark replays with the profile's replay header when it declares one, and
// leave exactly one business record.
//
// Catches: replay-reexecutes (the replay path writes the record again: responses look
// perfect, the store has N rows) and lost-write (201 without a record).
func init() {
	register(&Property{
		Name: "replay",
		Must: `Sending the same request with the same key N times in sequence MUST return the first
answer every time (status and body, volatile fields ignored), carry the profile's replay header on
every replay, and leave exactly one business record.`,
		Catches: []string{"replay-reexecutes", "lost-write"},
		Needs:   []string{"operations", "operations[].observer (for the record count)"},
		specs:   replaySpecs,
	})
}

func replaySpecs(e *Env) {
	for _, def := range e.Target.Operations {
		It(sprintf("%s: %d sequential sends of one request replay the first answer and leave one record",
			def.Name, e.Settings.ReplayN), func() {
			op := e.NewOp(def)
			first := e.ok(op.Do(Send{Instance: 0}))
			expectSuccess(first, "first answer")
			for i := 1; i < e.Settings.ReplayN; i++ {
				again := e.ok(op.Do(Send{Instance: i}))
				e.expectSame(first, again, "replay %d of %d", i+1, e.Settings.ReplayN)
				e.expectReplayHeader(again.RespHeader)
			}
			e.expectRecords(op, 1)
		})
	}
}

// expectReplayHeader checks the profile's replay header on a replay.
func (e *Env) expectReplayHeader(h http.Header) {
	rh := e.Target.Profile.ReplayHeader
	if rh.Name == "" {
		return
	}
	got, ok := h[http.CanonicalHeaderKey(rh.Name)]
	ExpectWithOffset(1, ok).To(BeTrue(), "a replay must carry the %s header", rh.Name)
	if rh.Value != "" {
		ExpectWithOffset(1, got).To(ContainElement(rh.Value), "replay header %s", rh.Name)
	}
}
