package client

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// What a scenario answers with is planned from the policy it judges: a failure the scenario
// needs the client to retry is one the policy retries (a status it lists, in the order its file
// lists them, a conditional one with its condition met; then a connection closed, where it
// retries reset), so that an SDK that retries no 5xx on a POST has its delays judged on what it
// does retry. A held attempt is never planned for that: its retry is exempt from the backoff
// envelope, and each costs attempt_timeout.

// retriedStatus answers with status code (and a Retry-After when ra > 0) so that the policy
// retries it: a status only a conditional entry of retries names, with its condition met.
func retriedStatus(p targets.RetryPolicy, code int, ra time.Duration) answer {
	an := status(code, ra)
	if p.RetriesStatus(code) {
		return an
	}
	for i := range p.RetriesWhen {
		if p.RetriesWhen[i].Status == code {
			an.when, an.met = &p.RetriesWhen[i], true
			break
		}
	}
	return an
}

// retriedFailures are the failures the policy retries that a scenario can plan: each status
// (PlannedStatuses, answered with its condition met), then a connection closed after processing
// (drop) when it retries reset. Empty: the policy retries nothing a scenario can plan.
func retriedFailures(p targets.RetryPolicy) []answer {
	var out []answer
	for _, st := range p.PlannedStatuses() {
		out = append(out, retriedStatus(p, st, 0))
	}
	if p.RetriesFailure("reset") {
		out = append(out, drop)
	}
	return out
}

// nothingPlanned is the unknown verdict's reason for a scenario with no failure to plan.
func nothingPlanned(c *targets.Client, cfg *targets.ClientConfiguration, what string) string {
	in := ""
	if cfg.Name != "" {
		in = " in configuration " + cfg.Name
	}
	return fmt.Sprintf("client %s%s declares it retries no status and no connection closed without an answer (retry.retries): %s",
		c.Name, in, what)
}

// withShouldRetry is an answer carrying the policy's should-retry header with value v ("":
// without it, whatever the error shape declares); the answer as it is when the policy declares
// no such header.
func withShouldRetry(p targets.RetryPolicy, an answer, v string) answer {
	if p.ShouldRetryHeader != nil {
		an.shouldRetry = &v
	}
	return an
}

// conditionPlans are the operations of retries-transient that judge what decides from an
// answer's content, each failed once and then answered with a success: each conditional entry
// of retries met and not met (the should-retry header removed, so that the condition decides),
// and, where the policy declares a should-retry header, a status it retries answered with the
// header's never value (never resent), one it never resends answered with its retry value
// (retried), and the status it retries without the header when the error shape declares one
// (the status decides).
func conditionPlans(c *targets.Client, p targets.RetryPolicy) []plan {
	var plans []plan
	for i := range p.RetriesWhen {
		w := &p.RetriesWhen[i]
		met, unmet := status(w.Status, 0), status(w.Status, 0)
		met.when, met.met, unmet.when = w, true, w
		plans = append(plans, plan{withShouldRetry(p, met, ""), success}, plan{withShouldRetry(p, unmet, ""), success})
	}
	h := p.ShouldRetryHeader
	if h == nil {
		return plans
	}
	retriedSt := firstRetried(p)
	if h.Never != "" && retriedSt > 0 {
		plans = append(plans, plan{withShouldRetry(p, retriedStatus(p, retriedSt, 0), h.Never), success})
	}
	if h.Retry != "" {
		if st := firstNotRetried(p); st > 0 {
			plans = append(plans, plan{withShouldRetry(p, status(st, 0), h.Retry), success})
		}
	}
	if e := c.ErrorFor(c.Operations[0], retriedSt); retriedSt > 0 && e != nil && hasHeader(e.Headers, h.Name) {
		plans = append(plans, plan{withShouldRetry(p, retriedStatus(p, retriedSt, 0), ""), success})
	}
	return plans
}

// firstRetried is the status the header's never value is judged on: a 503 when the policy
// retries it, else the first it retries (0: none).
func firstRetried(p targets.RetryPolicy) int {
	if p.RetriesStatus(503) {
		return 503
	}
	if st := p.PlannedStatuses(); len(st) > 0 {
		return st[0]
	}
	return 0
}

// firstNotRetried is the status the header's retry value is judged on: the first the policy
// never resends, else the first 4xx it does not declare (0: none).
func firstNotRetried(p targets.RetryPolicy) int {
	if len(p.Never) > 0 {
		return p.Never[0]
	}
	if i := slices.IndexFunc(undeclared4xx, func(st int) bool { return !p.Declares(st) }); i >= 0 {
		return undeclared4xx[i]
	}
	return 0
}

// hasHeader reports whether a header map names h (in any case).
func hasHeader(m map[string]string, h string) bool {
	for k := range m {
		if http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(h) {
			return true
		}
	}
	return false
}
