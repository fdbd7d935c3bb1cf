package check

import (
	"fmt"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// HostileSend is one hostile key sent (keys): what the key is, whether it was built on the run's
// other key (and sent with that key's body), the attempt and, for a key not built on it, the
// records of its own ref.
type HostileSend struct {
	What    string
	Of      bool
	Attempt history.Attempt
	Records Count
}

// HostileKeys is what the keys property's hostile-key spec observed: a plain request with a
// fresh key (Other), the hostile keys sent after it, the records of Other's ref at the end (the
// keys built on Other share it), and whether the API still answered afterwards: its health
// check (Alive: "" or why not) and a plain request with a fresh key.
type HostileKeys struct {
	Other       history.Attempt
	Keys        []HostileSend
	OtherRecord Count
	Alive       string
	Plain       history.Attempt
}

// Hostile judges hostile keys (keys): each MUST get either a rejection (a 4xx, no record) or its
// own single record and its own answer: never a 5xx, never another key's stored answer. A key
// built on another key of the run shares that key's ref: their ref MUST hold one record more for
// each of them answered 2xx. Afterwards the API MUST still answer its health check and a plain
// request; otherwise it is target-crashed, naming the key that preceded the silence. A key that
// got no answer while the API lives on was refused (the connection closed on it) when it left no
// record, and is unknown when it did.
func Hostile(h HostileKeys, p targets.Profile) Result {
	j := newJudge(p)
	if !j.success(h.Other, "the plain request before the hostile keys") {
		return j.result()
	}
	answers := []history.Attempt{h.Other}
	accepted, silentOf := 0, 0
	alive := h.Alive == "" && h.Plain.Outcome == history.OK && is2xx(h.Plain.Status)
	for _, k := range h.Keys {
		a := k.Attempt
		if a.Outcome != history.OK {
			// Without an answer: the API died (judged below), or it closed the connection on a
			// key it would not read, a refusal when no record came of it.
			if alive && k.Of {
				silentOf++
			} else if alive && j.counted(k.Records) && k.Records.N > 0 {
				j.unknownf("%s (attempt #%d) got no answer, yet left %d records: %s", k.What, a.Seq, k.Records.N, a.Err)
			}
			continue
		}
		switch {
		case a.Status >= 500:
			j.add(anomaly(reports.KindServerError, a, fmt.Sprintf("%s got %d: a server error for a key the API could have refused", k.What, a.Status), a.Seq))
			j.notMore(k.Records, 0, a.Seq)
		case is2xx(a.Status):
			if foreign, ok := j.storedElsewhere(a, answers); ok {
				j.add(anomaly(reports.KindForeignResponse, a, fmt.Sprintf("%s got the answer stored for the key of attempt #%d", k.What, foreign.Seq),
					foreign.Seq, a.Seq))
			}
			answers = append(answers, a)
			if k.Of {
				accepted++
			} else {
				j.records(k.Records, 1, a.Seq)
			}
		case a.Status >= 400:
			if !k.Of {
				j.noRecord(k.Records, k.What+", refused,", a.Seq)
			}
		default:
			j.wrongStatus(a, "a 4xx rejection or a 2xx of its own", k.What)
		}
	}
	if c := h.OtherRecord; silentOf > 0 && j.counted(c) && c.N > 1+accepted && c.N <= 1+accepted+silentOf {
		j.unknownf("%d keys built on the key of attempt #%d got no answer, and its ref has %d records: whether they were processed cannot be told",
			silentOf, h.Other.Seq, c.N)
	} else {
		j.records(c, 1+accepted, h.Other.Seq)
	}
	j.crashed(h)
	return j.result()
}

// storedElsewhere returns the earlier answer whose body a repeats, if any.
func (j *judge) storedElsewhere(a history.Attempt, earlier []history.Attempt) (history.Attempt, bool) {
	for _, e := range earlier {
		if j.sameBody(e, a) {
			return e, true
		}
	}
	return history.Attempt{}, false
}

// crashed adds target-crashed when the API no longer answers its health check or a plain
// request, naming the first hostile key that got no answer (or, when every one was answered,
// the last one sent).
func (j *judge) crashed(h HostileKeys) {
	plainOK := h.Plain.Outcome == history.OK && is2xx(h.Plain.Status)
	var silent *HostileSend
	for i := range h.Keys {
		if h.Keys[i].Attempt.Outcome != history.OK {
			silent = &h.Keys[i]
			break
		}
	}
	if h.Alive == "" && plainOK {
		return // a key without an answer while the API lives on: judged by its records above
	}
	if len(h.Keys) == 0 {
		return
	}
	last, after := h.Keys[len(h.Keys)-1], "after"
	if silent != nil {
		last, after = *silent, "at"
	}
	plain := "got no answer"
	if h.Plain.Outcome == history.OK {
		plain = fmt.Sprintf("got %d", h.Plain.Status)
	}
	health := "its health check answered"
	if h.Alive != "" {
		health = h.Alive
	}
	j.add(anomaly(reports.KindTargetCrashed, last.Attempt, fmt.Sprintf("the API stopped answering %s %s, key %s (attempt #%d): %s, and a plain request %s",
		after, last.What, quoteKey(last.Attempt.Key), last.Attempt.Seq, health, plain), last.Attempt.Seq, h.Plain.Seq))
}

// quoteKey quotes a key for a sentence, its control characters escaped and a long one cut.
func quoteKey(k string) string {
	if len(k) > 80 {
		return fmt.Sprintf("%q... (%d characters)", k[:60], len(k))
	}
	return fmt.Sprintf("%q", k)
}

// ProcessedTwice judges two callers that send a request the profile processes without
// idempotency (an empty or a missing key, empty_key_status or missing_key_status: processed),
// with different bodies (keys): two records, each caller its own answer. An API that stores
// every such request under one record hands the second caller the first one's answer.
func ProcessedTwice(first, second history.Attempt, recFirst, recSecond Count, what string, p targets.Profile) Result {
	j := newJudge(p)
	a := j.success(first, "the first request with "+what)
	b := j.success(second, "the second caller's request with "+what+" and another body")
	if a && b && j.sameBody(first, second) {
		j.add(anomaly(reports.KindForeignResponse, second, fmt.Sprintf(
			"the second caller's request with %s and another body got the answer of the first (#%d): every such request is stored under one key",
			what, first.Seq), first.Seq, second.Seq))
	}
	j.recordsIf(a, recFirst, 1, first.Seq)
	j.recordsIf(b, recSecond, 1, second.Seq)
	return j.result()
}
