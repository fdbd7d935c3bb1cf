package check

// EventUnderBrokerOutage judges the events of operations acknowledged while the API's link to
// its broker was cut, and of one whose publisher confirm was lost after the broker took the
// message (event-under-broker-outage): every acknowledged operation's event MUST be published
// within the declared time after its 2xx, or after the link was healed, under one id
// (missing-event, event-new-id); copies of that id are fine.
//
// A step that exercised nothing (ev.Steps: no event taken while the answers were cut, nothing
// acknowledged while the link was cut) makes the result unknown, never a pass; an anomaly any
// step observed stays a failure.
func EventUnderBrokerOutage(ops []EventOp, ev Events) Result {
	j := newJudge(consumerProfile)
	j.afterFaults(ops, ev)
	j.steps(ev.Steps)
	return j.result()
}
