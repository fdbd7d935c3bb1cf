package probe

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The probe compares answers as check does (suites/check/answers.go).

// differences lists where answer b differs from answer a (check.AnswerDifferences).
func differences(a, b history.Attempt, ig targets.Ignore) []string {
	return check.AnswerDifferences(a, b, ig)
}

// sameAnswer reports whether b repeats a: same status and body.
func sameAnswer(a, b history.Attempt, ig targets.Ignore) bool { return check.SameAnswer(a, b, ig) }

// bodyDifferences compares two bodies (check.BodyDifferences).
func bodyDifferences(a, b []byte, ig targets.Ignore) []string { return check.BodyDifferences(a, b, ig) }

// replayMarker returns the header a replay carries that the first answer lacked
// (check.ReplayMarker).
func replayMarker(first, replay history.Attempt, ig targets.Ignore) (marker string, others []string) {
	return check.ReplayMarker(first, replay, ig)
}
