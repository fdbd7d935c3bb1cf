package targets

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy is the retry policy a client declares. The defaults are the source articles'
// rules; a policy declared otherwise is what its properties check (an expectation), and each
// difference from the rules is a deviation the summary lists (Deviations).
type RetryPolicy struct {
	// MaxAttempts bounds the attempts of one operation, the first counted (default 5).
	MaxAttempts int
	// AttemptTimeout is how long the client waits for one attempt's answer (default 2s).
	AttemptTimeout time.Duration
	// Retries are what the client retries: reset (the connection closed without an answer),
	// timeout (no answer within the attempt timeout), 5xx, or a status code (default reset,
	// timeout, 5xx, 409, 429), in the order the file lists them; its conditional entries are
	// RetriesWhen.
	Retries []string
	// RetriesWhen are the conditional entries of retries ({status: 429, when: {jsonpath:
	// $.error.code, equals: lock_timeout}}): each makes its status retried only when the
	// answer's body meets its condition (see Decide).
	RetriesWhen []RetryWhen
	// ShouldRetryHeader, when set, is a header of the API's answers whose value decides over
	// everything else (retry.should_retry_header; see Decide).
	ShouldRetryHeader *ShouldRetryHeader
	// Never are the statuses never resent with the same key (default 400, 401, 403, 404, 422).
	Never []int
	// HonorsRetryAfter says the client waits at least a Retry-After (default true): on every
	// status it retries, or only on RetryAfterStatuses when they are set.
	HonorsRetryAfter bool
	// RetryAfterStatuses scope HonorsRetryAfter (honors_retry_after: [429, 503]); nil: every
	// status. The retry-after property judges these; a retry after another status is judged by
	// backoff, whatever Retry-After it carried.
	RetryAfterStatuses []int
	// Backoff is the delay before retry n: min(Max, Initial*Multiplier^(n-1)) with Jitter.
	Backoff Backoff
	// PersistsKeys says a restarted client reuses the key of a pending operation (default true).
	PersistsKeys bool
	// TransportResends is how many times per operation the client's transport re-sends a request
	// on its own, at once, after a connection closed without an answer (Go's net/http replays a
	// request that carries an Idempotency-Key and a rewindable body on a reused connection): up
	// to that many immediate re-sends with the same key and an equal body are not counted as
	// attempts nor judged as hammering (default 0, a deviation otherwise).
	TransportResends int
}

// DefaultRetryPolicy is the source articles' rules.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, AttemptTimeout: 2 * time.Second,
		Retries: []string{"reset", "timeout", "5xx", "409", "429"}, Never: []int{400, 401, 403, 404, 422},
		HonorsRetryAfter: true, PersistsKeys: true,
		Backoff: Backoff{Initial: 100 * time.Millisecond, Multiplier: 2, Max: 2 * time.Second, Jitter: JitterFull}}
}

// RetriesStatus reports whether the policy retries an answer with this status whatever its
// content: the status listed in retries, or the class 5xx for a status no conditional entry
// names (Decide judges one answer, conditions and the should-retry header included).
func (p RetryPolicy) RetriesStatus(status int) bool {
	if slices.Contains(p.Never, status) {
		return false
	}
	if slices.Contains(p.Retries, strconv.Itoa(status)) {
		return true
	}
	return status >= 500 && slices.Contains(p.Retries, "5xx") && !p.Conditional(status)
}

// Declares reports whether the policy says what the client does with an answer of this status:
// it retries it (always, or on a condition), or never resends it. A retry of a status it does
// not declare is a retry the policy does not describe (undeclared-retry).
func (p RetryPolicy) Declares(status int) bool {
	return p.RetriesStatus(status) || p.Conditional(status) || slices.Contains(p.Never, status)
}

// RetriedStatuses are the status codes the policy lists in retries, in the order listed (not
// 5xx, reset nor timeout).
func (p RetryPolicy) RetriedStatuses() []int {
	var out []int
	for _, r := range p.Retries {
		if n, err := strconv.Atoi(r); err == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// HonoursRetryAfterOn reports whether the client declares it waits for a Retry-After on an
// answer with this status.
func (p RetryPolicy) HonoursRetryAfterOn(status int) bool {
	return p.HonorsRetryAfter && (p.RetryAfterStatuses == nil || slices.Contains(p.RetryAfterStatuses, status))
}

// RetriesFailure reports whether the policy retries an attempt without an answer: reset (the
// connection closed) or timeout.
func (p RetryPolicy) RetriesFailure(kind string) bool { return slices.Contains(p.Retries, kind) }

// Deviations says, one phrase each, how the policy differs from the source articles' rules.
func (p RetryPolicy) Deviations() []string {
	def := DefaultRetryPolicy()
	var out []string
	for _, r := range def.Retries {
		st, _ := strconv.Atoi(r)
		switch {
		case slices.Contains(p.Retries, r):
		case p.Conditional(st):
			for _, w := range p.RetriesWhen {
				if w.Status == st {
					out = append(out, "retries "+retryWords(r)+" only when its "+w.JSONPath+" is "+w.Equals)
				}
			}
		default:
			out = append(out, "does not retry "+retryWords(r))
		}
	}
	for _, s := range def.Never {
		if !slices.Contains(p.Never, s) {
			out = append(out, fmt.Sprintf("may resend a %d with the same key", s))
		}
	}
	switch {
	case !p.HonorsRetryAfter:
		out = append(out, "does not honour Retry-After")
	case p.RetryAfterStatuses != nil:
		for _, s := range rfcRetryAfter {
			if !p.HonoursRetryAfterOn(s) {
				out = append(out, fmt.Sprintf("does not honour Retry-After on a %d", s))
			}
		}
	}
	if !p.Backoff.Jittered() {
		out = append(out, "retries without jitter")
	}
	if !p.PersistsKeys {
		out = append(out, "keeps its keys only in memory (a restart sends a new one)")
	}
	if p.MaxAttempts <= 1 {
		out = append(out, "never retries")
	}
	if p.TransportResends > 0 {
		out = append(out, fmt.Sprintf("lets its transport re-send a request at once after a connection closed without an answer (up to %d per operation, not counted as attempts)",
			p.TransportResends))
	}
	return out
}

// rfcRetryAfter are the statuses whose Retry-After RFC 9110 (503) and RFC 6585 (429) define a
// wait for: a client that declares honors_retry_after as a list without one of them deviates.
var rfcRetryAfter = []int{429, 503}

// retryWords names a retry condition for people.
func retryWords(r string) string {
	switch r {
	case "reset":
		return "a connection closed without an answer"
	case "timeout":
		return "an attempt that timed out"
	case "5xx":
		return "a 5xx"
	}
	return "a " + r
}

// maxTransportResends bounds retry.transport_resends.
const maxTransportResends = 10

// retryPolicy decodes a retry block (a client's, or a configuration's) over base: the defaults,
// or the client's policy, field by field.
func (d *decoder) retryPolicy(o *object, base RetryPolicy) RetryPolicy {
	p := base
	if !o.has("retry") {
		return p
	}
	ro, ok := d.child(o, "retry")
	if !ok {
		return p
	}
	if v, ok := d.integer(ro, "max_attempts", 1, 100); ok {
		p.MaxAttempts = v
	}
	if v, ok := d.integer(ro, "transport_resends", 0, maxTransportResends); ok {
		p.TransportResends = v
	}
	if v, ok := d.duration(ro, "attempt_timeout"); ok {
		p.AttemptTimeout = v
	}
	d.retriesEntries(ro, &p)
	d.shouldRetryHeader(ro, &p)
	if list, ok := d.strings(ro, "never"); ok {
		p.Never = nil
		for _, r := range list {
			n, err := strconv.Atoi(strings.TrimSpace(r))
			if err != nil || n < 400 || n > 499 {
				d.ps.add(ro.lineOf("never"), ro.at("never"), "must list 4xx status codes, got %q", r)
				continue
			}
			p.Never = append(p.Never, n)
		}
	}
	d.honorsRetryAfter(ro, &p)
	if v, ok := d.boolean(ro, "persists_keys"); ok {
		p.PersistsKeys = v
	}
	if ro.has("backoff") {
		d.backoff(ro, &p.Backoff)
	}
	for _, s := range p.Never {
		switch {
		case slices.Contains(p.Retries, strconv.Itoa(s)):
			d.ps.add(ro.lineOf("never"), ro.at("never"), "%d is both retried and never resent", s)
		case p.Conditional(s):
			d.ps.add(ro.lineOf("never"), ro.at("never"), "%d is both retried (on a condition) and never resent", s)
		}
	}
	return p
}

// backoff decodes a retry policy's backoff over its defaults.
func (d *decoder) backoff(o *object, b *Backoff) {
	bo, ok := d.child(o, "backoff")
	if !ok {
		return
	}
	if v, ok := d.duration(bo, "initial"); ok {
		b.Initial = v
	}
	if v, ok := d.duration(bo, "max"); ok {
		b.Max = v
	}
	if s, ok := d.str(bo, "multiplier"); ok {
		m, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || m < 1 {
			d.ps.add(bo.lineOf("multiplier"), bo.at("multiplier"), "must be a number of at least 1, got %q", s)
		} else {
			b.Multiplier = m
		}
	}
	if bo.has("jitter") {
		d.jitter(bo, b)
	}
	if b.Max < b.Initial {
		d.ps.add(bo.line, o.at("backoff"), "max %v is shorter than initial %v", b.Max, b.Initial)
	}
}

// honorsRetryAfter decodes honors_retry_after: true, false, or the statuses whose Retry-After the
// client waits for ([429, 503]).
func (d *decoder) honorsRetryAfter(o *object, p *RetryPolicy) {
	if !o.has("honors_retry_after") {
		return
	}
	if _, isSeq := o.fields["honors_retry_after"].val.(*ast.SequenceNode); !isSeq {
		if v, ok := d.boolean(o, "honors_retry_after"); ok {
			p.HonorsRetryAfter = v
		}
		return
	}
	list, _ := d.strings(o, "honors_retry_after")
	p.HonorsRetryAfter, p.RetryAfterStatuses = len(list) > 0, []int{}
	for _, r := range list {
		n, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || n < 400 || n > 599 {
			d.ps.add(o.lineOf("honors_retry_after"), o.at("honors_retry_after"), "must be true, false or a list of status codes 400-599 ([429, 503]), got %q", r)
			continue
		}
		p.RetryAfterStatuses = append(p.RetryAfterStatuses, n)
	}
}
