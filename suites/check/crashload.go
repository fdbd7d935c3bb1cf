package check

import (
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// CrashLoad is what the crash-under-load property observed: the attempts of the load and of the
// completion that followed (every operation retried until it succeeded or its time ran out), the
// record count of every operation, and the nemesis's events.
type CrashLoad struct {
	// Attempts are the load's and the completion's attempts.
	Attempts iter.Seq[history.Attempt]
	// Counts are the records of each operation, by key.
	Counts map[string]Count
	// Events are the faults injected and healed meanwhile.
	Events []history.Event
	// LockTimeout and Retention are the target's declared ones.
	LockTimeout, Retention time.Duration
	// CheckedAt is when the records were counted: an attempt without an answer may have been
	// processed at any time until then.
	CheckedAt time.Time
}

// crashKey is what CrashUnderLoad keeps per operation.
type crashKey struct {
	key, op, tenant string
	acked           history.Attempt   // the first 2xx answer (Seq 0: none)
	spans           []history.Attempt // its attempts, in order
}

// CrashUnderLoad judges a load under crashes (crash-under-load): no operation MAY have two
// records; every operation acknowledged with a 2xx MUST have exactly one (else the write was
// lost); no key MAY still answer the in-flight status after the completion. An operation still
// retried after the declared retention may be processed again (a new request by then): its
// second record is not held against the target. Each anomaly names the kills that hit the
// operation's attempts.
func CrashUnderLoad(c CrashLoad, p targets.Profile) Result {
	j := newJudge(p)
	byKey := map[string]*crashKey{}
	var order []*crashKey
	for a := range c.Attempts {
		k := byKey[a.Key]
		if k == nil {
			k = &crashKey{key: a.Key, op: a.Op, tenant: a.Tenant}
			byKey[a.Key] = k
			order = append(order, k)
		}
		k.spans = append(k.spans, a)
		if succeeded(a) && k.acked.Seq == 0 {
			k.acked = a
		}
	}
	kills := killsOf(c.Events)
	for _, k := range order {
		j.crashKey(k, c, kills, p)
	}
	return j.result()
}

// crashKey judges one operation of CrashUnderLoad.
func (j *judge) crashKey(k *crashKey, c CrashLoad, kills []history.Event, p targets.Profile) {
	hit := killsHitting(kills, k.spans)
	first, last := k.spans[0], k.spans[len(k.spans)-1]
	an := func(kind reports.Kind, msg string, seqs ...int64) {
		j.add(reports.Anomaly{Kind: kind, Op: k.op, Tenant: k.tenant, Key: k.key, Seqs: seqs, Message: msg + hit})
	}
	if k.acked.Seq == 0 {
		switch {
		case last.Outcome != history.OK:
			j.unknownf("key %s got no answer after the load: %s", k.key, last.Err)
		case p.AcceptsInFlightStatus(last.Status):
			an(reports.KindStuckKey, fmt.Sprintf("still answered %d (in flight) %v after the load: the key is stuck",
				last.Status, c.LockTimeout), first.Seq, last.Seq)
		}
	}
	cnt, ok := c.Counts[k.key]
	if !ok || !j.counted(cnt) {
		return
	}
	expired := c.Retention > 0 && p.Expired == targets.ExpiredNew && k.processedAfter(c.Retention, c.LockTimeout, c.CheckedAt)
	switch {
	case cnt.N > 1 && expired:
	case cnt.N > 1:
		acked := "never acknowledged"
		if k.acked.Seq != 0 {
			acked = fmt.Sprintf("acknowledged with %d", k.acked.Status)
		}
		an(reports.KindDuplicateRecord, fmt.Sprintf("%d business records for one operation (%s)", cnt.N, acked),
			first.Seq, last.Seq)
	case cnt.N == 0 && k.acked.Seq != 0:
		an(reports.KindLostAcknowledgedWrite, fmt.Sprintf("acknowledged with %d but no business record after the crashes", k.acked.Status),
			k.acked.Seq)
	}
}

// processedAfter reports whether one of the operation's attempts may have been processed more
// than retention after its first attempt started, when it was legitimately a new request: an
// answered attempt until its end, one without an answer until the records were counted.
func (k *crashKey) processedAfter(retention, lockTimeout time.Duration, checkedAt time.Time) bool {
	for _, a := range k.spans {
		end := a.End
		switch a.Outcome {
		case history.OK:
		case history.Unknown:
			// Its answer was lost (a kill, a timeout): the target may have gone on with it
			// until it died or its claim timed out, never later.
			end = a.End.Add(lockTimeout)
			if end.After(checkedAt) {
				end = checkedAt
			}
		default: // never sent
			continue
		}
		if end.Sub(k.spans[0].Start) > retention {
			return true
		}
	}
	return false
}

// killsOf returns the kill injections among the events.
func killsOf(events []history.Event) []history.Event {
	var out []history.Event
	for _, e := range events {
		if e.Kind == "kill" && e.Action == "inject" && e.Err == "" {
			out = append(out, e)
		}
	}
	return out
}

// killsHitting says which kills hit one of the attempts (", in flight at kill 3 (instance 0)").
func killsHitting(kills []history.Event, spans []history.Attempt) string {
	var hits []string
	for i, k := range kills {
		for _, a := range spans {
			if a.InFlightAt(k.At) {
				hits = append(hits, fmt.Sprintf("kill %d (%s)", i+1, k.Target))
				break
			}
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return "; in flight at " + strings.Join(hits, ", ")
}
