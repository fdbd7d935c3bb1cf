package consumer

import (
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// This file holds how long a consumer spec waits for effects to show: every wait comes from the
// consumer's redelivery clock (framework.RedeliveryClock), bounded by --max-redelivery-wait.

// waitEffects polls the event's effects until there are at least want or d passed, and returns
// the last count: a queue consumer takes effect some time after the broker confirmed a publish.
func (ev *Event) waitEffects(want int, d time.Duration) check.Count {
	deadline := time.Now().Add(d)
	defer ev.s.Waiting(fmt.Sprintf("event %s to take effect on consumer %s (the redelivery clock allows %s)", ev.ID, ev.C.Name, framework.Seconds(d)), deadline)()
	for {
		c := ev.Effects()
		if c.Err == "" && c.N >= want || time.Now().After(deadline) || ev.s.Ctx().Err() != nil {
			return c
		}
		ev.s.SleepUntil(time.Now().Add(50 * time.Millisecond))
	}
}

// duplicateGrace is how long after an event's first effect a duplicate is waited for.
const duplicateGrace = 300 * time.Millisecond

// settle returns an event's effects once they can be counted: at once for a webhook (its 2xx
// came after the effect), on a broker as settleAll does.
func (s *S) settle(ev *Event) check.Count {
	if ev.C.Transport == targets.TransportWebhook {
		return ev.Effects()
	}
	return s.settleAll([]*Event{ev})[0]
}

// settleAll returns the events' effects once they can be counted on a broker: after each took
// effect (or the settle wait of the redelivery clock passed in all), and a moment more, in which
// a duplicate effect would have come.
func (s *S) settleAll(evs []*Event) []check.Count {
	if len(evs) == 0 {
		return nil
	}
	return s.settleWithin(evs, s.settleWait(evs[0].C))
}

// settleWait is how long a queue consumer is given to apply what was published (its broker
// redelivers what a handling gave back): the redelivery clock's wait without a claim, bounded by
// --max-redelivery-wait.
func (s *S) settleWait(c *targets.Consumer) time.Duration { return s.RedeliveryWait(c, false) }

// claimWait is how long an event is redelivered, or its redelivery awaited, when a handling
// may have left a claim on it (killed, held, or failed on a consumer that keeps its claim): the
// redelivery clock's wait after a claim (the lock timeout first), bounded by
// --max-redelivery-wait.
func (s *S) claimWait(c *targets.Consumer) time.Duration { return s.RedeliveryWait(c, true) }

// settleWithin is settleAll with the events given d in all to take effect.
func (s *S) settleWithin(evs []*Event, d time.Duration) []check.Count {
	counts := make([]check.Count, len(evs))
	deadline := time.Now().Add(d)
	for i, ev := range evs {
		counts[i] = ev.waitEffects(1, time.Until(deadline))
	}
	s.SleepUntil(time.Now().Add(duplicateGrace))
	for i, ev := range evs {
		if counts[i].Err == "" && counts[i].N > 0 {
			counts[i] = ev.Effects()
		}
	}
	return counts
}
