package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// What a replay is compared with (profile.replay_returns): the first answer (original), a
// fresh read of the resource the first answer names, made right after the replay (current), or
// the first answer's operation reference (reference).

// ReplayDiffs lists how again fails to replay first under the profile's replay_returns (nil:
// it replays it), or says why that cannot be told (unknown: a fresh read that failed).
//   - original: Compare (status, headers, body, operation reference);
//   - current: again names the resource first named (the fresh reads' URLs, made from the id
//     each answer carries) and its body equals the fresh read made after it (the profile's
//     ignored paths left out); a replay without a read (it names no resource) is compared as an
//     original one;
//   - reference: again carries first's operation reference.
func ReplayDiffs(first, again history.Attempt, p targets.Profile) (diffs []string, unknown string) {
	switch p.ReplayReturns {
	case targets.ReplayReference:
		if again.Reference == "" || again.Reference != first.Reference {
			return []string{fmt.Sprintf("reference (%s != %s)", orNone(first.Reference), orNone(again.Reference))}, ""
		}
		return nil, ""
	case targets.ReplayCurrent:
		cur := again.Current
		switch {
		case cur == nil && first.Current == nil:
			return Compare(first, again, p), ""
		case cur == nil:
			return []string{"resource (the replay names none: " + first.Current.URL + " was read after the first answer)"}, ""
		case cur.Err != "":
			return nil, "the fresh read of " + cur.URL + " failed: " + cur.Err
		case cur.Status < 200 || cur.Status > 299:
			return nil, fmt.Sprintf("the fresh read of %s answered %d", cur.URL, cur.Status)
		case first.Current != nil && first.Current.URL != cur.URL:
			return []string{fmt.Sprintf("resource (%s != %s)", first.Current.URL, cur.URL)}, ""
		}
		if !is2xx(again.Status) {
			return []string{fmt.Sprintf("status (%d, not a 2xx)", again.Status)}, ""
		}
		return CompareBodies(cur.Body, again.RespBody, p.Ignore), ""
	}
	return Compare(first, again, p), ""
}

// replayBasis says in words what a replay was compared with, for messages.
func replayBasis(first, again history.Attempt, p targets.Profile) string {
	switch {
	case p.ReplayReturns == targets.ReplayReference:
		return fmt.Sprintf("the operation reference of the first answer (#%d, replay_returns: reference)", first.Seq)
	case p.ReplayReturns == targets.ReplayCurrent && again.Current != nil:
		return fmt.Sprintf("the resource's current representation (GET %s right after it, replay_returns: current)", again.Current.URL)
	}
	return fmt.Sprintf("the first answer (#%d)", first.Seq)
}
