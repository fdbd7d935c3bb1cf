package targets

import (
	"fmt"
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
	// timeout, 5xx, 409, 429).
	Retries []string
	// Never are the statuses never resent with the same key (default 400, 401, 403, 404, 422).
	Never []int
	// HonorsRetryAfter says the client waits at least a Retry-After (default true).
	HonorsRetryAfter bool
	// Backoff is the delay before retry n: min(Max, Initial*Multiplier^(n-1)) with Jitter.
	Backoff Backoff
	// PersistsKeys says a restarted client reuses the key of a pending operation (default true).
	PersistsKeys bool
}

// Backoff is an exponential backoff.
type Backoff struct {
	Initial    time.Duration
	Multiplier float64
	Max        time.Duration
	// Jitter is full (a delay in [0, cap]), equal ([cap/2, cap]) or none (cap).
	Jitter Jitter
}

// Jitter is how a backoff randomises its delays.
type Jitter string

// The jitters.
const (
	JitterFull  Jitter = "full"
	JitterEqual Jitter = "equal"
	JitterNone  Jitter = "none"
)

// DefaultRetryPolicy is the source articles' rules.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, AttemptTimeout: 2 * time.Second,
		Retries: []string{"reset", "timeout", "5xx", "409", "429"}, Never: []int{400, 401, 403, 404, 422},
		HonorsRetryAfter: true, PersistsKeys: true,
		Backoff: Backoff{Initial: 100 * time.Millisecond, Multiplier: 2, Max: 2 * time.Second, Jitter: JitterFull}}
}

// Cap is the backoff's cap before retry n (n = 1 is the first retry).
func (b Backoff) Cap(n int) time.Duration {
	d := float64(b.Initial)
	for i := 1; i < n && d < float64(b.Max); i++ {
		d *= b.Multiplier
	}
	return min(time.Duration(d), b.Max)
}

// Envelope is the range a delay before retry n falls in.
func (b Backoff) Envelope(n int) (lo, hi time.Duration) {
	c := b.Cap(n)
	switch b.Jitter {
	case JitterFull:
		return 0, c
	case JitterEqual:
		return c / 2, c
	}
	return c, c
}

// RetriesStatus reports whether the policy retries an answer with this status.
func (p RetryPolicy) RetriesStatus(status int) bool {
	if slices.Contains(p.Never, status) {
		return false
	}
	return slices.Contains(p.Retries, strconv.Itoa(status)) || status >= 500 && slices.Contains(p.Retries, "5xx")
}

// RetriesFailure reports whether the policy retries an attempt without an answer: reset (the
// connection closed) or timeout.
func (p RetryPolicy) RetriesFailure(kind string) bool { return slices.Contains(p.Retries, kind) }

// Deviations says, one phrase each, how the policy differs from the source articles' rules.
func (p RetryPolicy) Deviations() []string {
	def := DefaultRetryPolicy()
	var out []string
	for _, r := range def.Retries {
		if !slices.Contains(p.Retries, r) {
			out = append(out, "does not retry "+retryWords(r))
		}
	}
	for _, s := range def.Never {
		if !slices.Contains(p.Never, s) {
			out = append(out, fmt.Sprintf("may resend a %d with the same key", s))
		}
	}
	if !p.HonorsRetryAfter {
		out = append(out, "does not honour Retry-After")
	}
	if p.Backoff.Jitter == JitterNone {
		out = append(out, "retries without jitter")
	}
	if !p.PersistsKeys {
		out = append(out, "keeps its keys only in memory (a restart sends a new one)")
	}
	if p.MaxAttempts <= 1 {
		out = append(out, "never retries")
	}
	return out
}

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

// retryPolicy decodes a client's retry block over the defaults.
func (d *decoder) retryPolicy(o *object) RetryPolicy {
	p := DefaultRetryPolicy()
	if !o.has("retry") {
		return p
	}
	ro, ok := d.object(o.fields["retry"].val, o.at("retry"), "max_attempts", "attempt_timeout", "retries", "never",
		"honors_retry_after", "backoff", "persists_keys")
	if !ok {
		return p
	}
	if v, ok := d.integer(ro, "max_attempts", 1, 100); ok {
		p.MaxAttempts = v
	}
	if v, ok := d.duration(ro, "attempt_timeout"); ok {
		p.AttemptTimeout = v
	}
	if list, ok := d.strings(ro, "retries"); ok {
		p.Retries = nil
		for _, r := range list {
			r = strings.TrimSpace(r)
			if n, err := strconv.Atoi(r); r != "reset" && r != "timeout" && r != "5xx" && (err != nil || n < 400 || n > 599) {
				d.ps.add(ro.lineOf("retries"), ro.at("retries"), "must list reset, timeout, 5xx or status codes 400-599, got %q", r)
				continue
			}
			p.Retries = append(p.Retries, r)
		}
	}
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
	if v, ok := d.boolean(ro, "honors_retry_after"); ok {
		p.HonorsRetryAfter = v
	}
	if v, ok := d.boolean(ro, "persists_keys"); ok {
		p.PersistsKeys = v
	}
	if ro.has("backoff") {
		d.backoff(ro, &p.Backoff)
	}
	for _, s := range p.Never {
		if slices.Contains(p.Retries, strconv.Itoa(s)) {
			d.ps.add(ro.lineOf("never"), ro.at("never"), "%d is both retried and never resent", s)
		}
	}
	return p
}

// backoff decodes a retry policy's backoff over its defaults.
func (d *decoder) backoff(o *object, b *Backoff) {
	bo, ok := d.object(o.fields["backoff"].val, o.at("backoff"), "initial", "multiplier", "max", "jitter")
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
	if s, ok := d.str(bo, "jitter"); ok {
		switch j := Jitter(strings.TrimSpace(s)); j {
		case JitterFull, JitterEqual, JitterNone:
			b.Jitter = j
		default:
			d.ps.add(bo.lineOf("jitter"), bo.at("jitter"), "must be full, equal or none, got %q", s)
		}
	}
	if b.Max < b.Initial {
		d.ps.add(bo.line, o.at("backoff"), "max %v is shorter than initial %v", b.Max, b.Initial)
	}
}
