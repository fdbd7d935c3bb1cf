package check

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// How two answers compare, for the probe and for what a run asks the API before its properties
// (the key forms): by status and body, the profile's ignored paths left out, and by the replay
// marker a second answer carries.

// AnswerDifferences lists where answer b differs from answer a: "status 201 != 422", then the JSON
// paths of the body (by value, the profile's ignored paths left out), or "body" for bodies that
// are not JSON and differ. No difference: nil.
func AnswerDifferences(a, b history.Attempt, ig targets.Ignore) []string {
	var out []string
	if a.Status != b.Status {
		out = append(out, fmt.Sprintf("status %d != %d", a.Status, b.Status))
	}
	return append(out, BodyDifferences(a.RespBody, b.RespBody, ig)...)
}

// SameAnswer reports whether b repeats a: same status and body.
func SameAnswer(a, b history.Attempt, ig targets.Ignore) bool {
	return len(AnswerDifferences(a, b, ig)) == 0
}

// BodyDifferences compares two bodies with CompareBodies (JSON by value, the ignored
// paths left out), except that bodies that are not JSON count as the same when they differ only
// in the white space around them.
func BodyDifferences(a, b []byte, ig targets.Ignore) []string {
	diffs := CompareBodies(a, b, ig)
	if slices.Equal(diffs, []string{"body"}) && bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) {
		return nil
	}
	return diffs
}

// ReplayMarker returns the header a replay carries that the first answer lacked, as
// "Name: value": a header whose name mentions "replay" or "idempot" first, else none. Volatile
// headers (targets.DefaultIgnoredHeaders and the profile's ignored ones) never count.
func ReplayMarker(first, replay history.Attempt, ig targets.Ignore) (marker string, others []string) {
	var added []string
	for name := range replay.RespHeader {
		if _, had := first.RespHeader[name]; had || ig.IgnoresHeader(name) ||
			slices.ContainsFunc(targets.DefaultIgnoredHeaders, func(h string) bool { return strings.EqualFold(h, name) }) {
			continue
		}
		added = append(added, name)
	}
	sort.Strings(added)
	for _, name := range added {
		l := strings.ToLower(name)
		line := http.CanonicalHeaderKey(name) + ": " + replay.RespHeader.Get(name)
		if marker == "" && (strings.Contains(l, "replay") || strings.Contains(l, "idempot")) {
			marker = line
			continue
		}
		others = append(others, line)
	}
	return marker, others
}
