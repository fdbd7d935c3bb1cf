package check

// EventAfterCrash judges the events of operations sent under concurrent load while the API was
// SIGKILLed and restarted (event-after-crash), one kill inside its hold between a commit and the
// publication where it can be held: every operation acknowledged with a 2xx MUST have its event
// published within the declared time after its 2xx, or after the restart that followed it, under
// one id (missing-event, event-new-id); copies of that id are fine.
//
// A step that exercised nothing (ev.Steps) makes the result unknown, never a pass; an anomaly
// stays a failure.
func EventAfterCrash(ops []EventOp, ev Events) Result {
	j := newJudge(consumerProfile)
	j.afterFaults(ops, ev)
	j.steps(ev.Steps)
	return j.result()
}
