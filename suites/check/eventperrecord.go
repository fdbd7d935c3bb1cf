package check

// EventPerRecord judges the events of operations each sent, replayed, raced and sent with
// another payload (and requests rejected without a key), event-per-record: every acknowledged
// operation MUST publish exactly one event id, within the declared time; nothing else MUST
// publish under another id; an operation that left no record (a rejection) MUST publish
// nothing; copies of one id MUST be equal outside the declared members.
func EventPerRecord(ops []EventOp, ev Events) Result {
	j := newJudge(consumerProfile)
	byOp, stray := j.partition(ops, ev)
	j.ghosts(stray, ops, ev)
	for i, op := range ops {
		evs := byOp[i]
		ok, acked := firstSuccess(op.Attempts)
		switch {
		case op.noRecord() && len(evs) > 0:
			what := "left no record"
			if op.Rejected {
				what = "was rejected"
			}
			j.ghostOf(op, evs, ev, what)
		case acked:
			j.oneID(op, evs, ok, ev)
		default:
			j.newIDsUnacknowledged(op, evs, ev)
		}
		j.differs(op, evs, ev)
	}
	j.steps(ev.Steps)
	return j.result()
}
