package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Replay judges N sequential sends of one request (replay): the first answer MUST be a 2xx,
// every later one its replay (with the profile's replay header), and one business record MUST
// result.
func Replay(attempts []history.Attempt, records Count, p targets.Profile) Result {
	j := newJudge(p)
	if len(attempts) == 0 {
		return Unknownf("no request was sent")
	}
	first := attempts[0]
	if !j.success(first, "the first send") {
		return j.result()
	}
	for i, a := range attempts[1:] {
		what := fmt.Sprintf("replay %d of %d", i+2, len(attempts))
		if j.answered(a, what) {
			j.same(first, a, what)
			j.replayHeader(a, what)
		}
	}
	j.records(records, 1, first.Seq)
	return j.result()
}
