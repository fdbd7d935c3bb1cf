package chain

import (
	"fmt"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The joint history of a chain: the client's attempts (the wiretap's entries in the chain's
// history), the API's records (its observer), the events it published (as the API part's
// harness observed them on the broker, copied into the chain's history) and the consumer's
// effects of each (its effects observer).

// eventsOf returns the events of pub observed since start that name one of the refs (their
// ref, or a record their 2xx answers name).
func (s *S) eventsOf(parts *framework.ChainParts, pub *targets.Publish, start time.Time, ties []string) []check.Event {
	var out []check.Event
	for _, e := range parts.API.EventsSeen(pub, start) {
		if e.Err == "" && slices.Contains(ties, e.Tie) {
			out = append(out, e)
		}
	}
	return out
}

// effects counts the consumer's effects of one event: of the business operation it names where
// the consumer's file says (consumers[].event.operation), or, when it names none there, of the
// event itself (its id is its operation).
func (s *S) effects(parts *framework.ChainParts, e check.Event) (int, error) {
	c := parts.Chain.EventConsumer()
	vars := targets.EventVars{EventID: e.ID, Operation: e.ID, Operations: []string{e.ID}}
	if op, ok := c.OperationOf(e.Body, nil); ok {
		vars.Operation, vars.Operations = op, []string{op}
	}
	ctx, cancel := s.AttemptCtx(1)
	defer cancel()
	return parts.Consumer.Target.Observe(ctx, c.Effects, vars, parts.Consumer.Observer, "consumer "+c.Name+" effects")
}

// ties are what the events of one operation name: its ref, or the records its 2xx answers name.
func ties(pub *targets.Publish, ref string, atts []history.Attempt) []string {
	if !pub.Tie.Record {
		return []string{ref}
	}
	var out []string
	for _, a := range atts {
		if framework.Succeeded(a) {
			if id, err := pub.RecordOf(a.RespBody); err == nil && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// settle waits until every operation that has a record has an event (at most pub.within after
// the later of its last attempt and resumed) and every event took effect (at most the
// consumer's redelivery clock more), and at least that clock after resumed (the consumer's
// restart: a redelivery of what it had applied before its kill comes within it), and returns
// the joint history.
func (s *S) settle(parts *framework.ChainParts, def *targets.Operation, pub *targets.Publish, start, resumed time.Time,
	ops []check.ChainOp) check.ChainRun {
	last := resumed
	for _, op := range ops {
		for _, a := range op.Attempts {
			last = later(last, a.End)
		}
	}
	redelivery := parts.Consumer.RedeliveryWait(parts.Chain.EventConsumer(), true)
	eventsBy := last.Add(pub.Within)
	effectsBy := eventsBy.Add(redelivery)
	var run check.ChainRun
	stop := s.Waiting(fmt.Sprintf("the operations' events and their effects (publishes[].within %s, then the consumer's redelivery clock %s)",
		framework.Seconds(pub.Within), framework.Seconds(redelivery)), effectsBy)
	for {
		run = s.observe(parts, def, pub, start, ops)
		now := time.Now()
		if (complete(run, false) || now.After(eventsBy)) && (complete(run, true) || now.After(effectsBy)) || s.Ctx().Err() != nil {
			break
		}
		s.SleepUntil(now.Add(200 * time.Millisecond))
	}
	stop()
	s.WaitUntil(fmt.Sprintf("the consumer's redelivery clock (%s) after the last fault", framework.Seconds(redelivery)), resumed.Add(redelivery))
	run = s.observe(parts, def, pub, start, ops)
	run.EventsUnseen = parts.API.EventsUnseen(pub)
	return run
}

// complete reports whether every operation with a record has an event, or (effects) every
// event observed an effect.
func complete(run check.ChainRun, effects bool) bool {
	for _, op := range run.Ops {
		if !effects && op.Records.N > 0 && len(op.Events) == 0 {
			return false
		}
		for _, e := range op.Events {
			if effects && e.Effects.N == 0 {
				return false
			}
		}
	}
	return true
}

// observe counts what each hop left of each operation now.
func (s *S) observe(parts *framework.ChainParts, def *targets.Operation, pub *targets.Publish, start time.Time, ops []check.ChainOp) check.ChainRun {
	api := parts.API
	var tn *targets.Tenant
	if len(api.Target.Tenants) > 0 {
		tn = api.Target.Tenants[0]
	}
	run := check.ChainRun{Ops: make([]check.ChainOp, len(ops))}
	for i, op := range ops {
		ctx, cancel := s.AttemptCtx(1)
		n, err := api.Target.CountRecords(ctx, def, tn, targets.Vars{Ref: op.Ref}, api.Observer)
		cancel()
		op.Records = check.Count{Op: def.Name, Ref: op.Ref, N: n, Taken: true}
		if err != nil {
			op.Records.Err = s.History.Redactor().String(err.Error())
		}
		op.Events = nil
		for _, e := range s.eventsOf(parts, pub, start, ties(pub, op.Ref, op.Attempts)) {
			j := slices.IndexFunc(op.Events, func(ce check.ChainEvent) bool { return ce.ID == e.ID })
			if j >= 0 {
				op.Events[j].Copies++
				continue
			}
			ce := check.ChainEvent{ID: e.ID, Seq: s.copyEvent(pub, e), Copies: 1, Unaccepted: api.EventUnaccepted(pub, e.ID),
				Effects: check.Count{Op: def.Name, Ref: op.Ref, Key: e.ID, Taken: true}}
			ce.Effects.N, err = s.effects(parts, e)
			if err != nil {
				ce.Effects.Err = s.History.Redactor().String(err.Error())
			}
			op.Events = append(op.Events, ce)
		}
		run.Ops[i] = op
	}
	return run
}

// copyEvent enters an event the API part's harness observed in the chain's history (once) and
// returns its number there.
func (s *S) copyEvent(pub *targets.Publish, e check.Event) int64 {
	for a := range s.History.After(0) {
		if a.IsEvent() && a.Key == e.ID {
			return a.Seq
		}
	}
	where := "on the broker"
	if pub.Webhook != nil {
		where = "at the harness's receiver"
	}
	return s.History.Add(history.Attempt{Op: pub.Name, Key: e.ID, Method: history.MethodEvent, URL: pub.Destination(),
		ReqBody: e.Body, Start: e.At, End: e.At, Outcome: history.OK,
		Note: "event " + pub.Name + " observed " + where + ", on its way to the consumer"}).Seq
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
