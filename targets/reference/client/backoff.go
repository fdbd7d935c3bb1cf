package client

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Defaults of the retry policy, used for the zero values of Policy's fields.
const (
	DefaultMaxAttempts       = 5
	DefaultAttemptTimeout    = 2 * time.Second
	DefaultBackoffInitial    = 100 * time.Millisecond
	DefaultBackoffMultiplier = 2.0
	DefaultBackoffMax        = 2 * time.Second
	DefaultJitter            = JitterFull
)

// MinDelay is the floor of every backoff delay, whatever the jitter and the policy: a
// retry sooner than this after the previous attempt's answer is what the harness calls
// hammering. It is also the low end of full jitter's range.
const MinDelay = 10 * time.Millisecond

// Jitter says how a backoff delay is drawn below its cap.
type Jitter string

// The jitters.
const (
	// JitterFull draws the delay uniformly from [MinDelay, cap].
	JitterFull Jitter = "full"
	// JitterEqual draws the delay uniformly from [cap/2, cap].
	JitterEqual Jitter = "equal"
	// JitterNone waits the cap itself.
	JitterNone Jitter = "none"
)

// ParseJitter returns the jitter with this name ("" is DefaultJitter).
func ParseJitter(name string) (Jitter, error) {
	switch j := Jitter(name); j {
	case "":
		return DefaultJitter, nil
	case JitterFull, JitterEqual, JitterNone:
		return j, nil
	}
	return "", fmt.Errorf("unknown jitter %q (known: full, equal, none)", name)
}

// Policy is the client's retry policy. Zero fields take the Default* values (a zero Max
// is at least Initial).
type Policy struct {
	// MaxAttempts bounds the attempts of one operation, the first included, counted across
	// restarts of the client.
	MaxAttempts int
	// AttemptTimeout bounds one attempt from dialling to the end of the response body; the
	// client then gives up on the attempt and closes its connection.
	AttemptTimeout time.Duration
	// Initial, Multiplier and Max shape the exponential backoff: retry n (n = 1 is the first
	// retry) waits at most min(Max, Initial*Multiplier^(n-1)); see Cap.
	Initial    time.Duration
	Multiplier float64
	Max        time.Duration
	// Jitter says how the delay is drawn below the cap.
	Jitter Jitter
}

// withDefaults returns p with its zero fields set to the defaults.
func (p Policy) withDefaults() Policy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.AttemptTimeout == 0 {
		p.AttemptTimeout = DefaultAttemptTimeout
	}
	if p.Initial == 0 {
		p.Initial = DefaultBackoffInitial
	}
	if p.Multiplier == 0 {
		p.Multiplier = DefaultBackoffMultiplier
	}
	if p.Max == 0 {
		p.Max = max(DefaultBackoffMax, p.Initial)
	}
	if p.Jitter == "" {
		p.Jitter = DefaultJitter
	}
	return p
}

// Check reports the first field of p (after defaults) that cannot work, named as its
// command-line flag.
func (p Policy) Check() error {
	p = p.withDefaults()
	switch {
	case p.MaxAttempts < 1:
		return fmt.Errorf("--max-attempts %d: at least 1 attempt is needed", p.MaxAttempts)
	case p.AttemptTimeout < 0:
		return fmt.Errorf("--attempt-timeout %s: must be positive", p.AttemptTimeout)
	case p.Initial < 0:
		return fmt.Errorf("--backoff-initial %s: must be positive", p.Initial)
	case p.Multiplier < 1 || math.IsInf(p.Multiplier, 0) || math.IsNaN(p.Multiplier):
		return fmt.Errorf("--backoff-multiplier %g: must be a finite number of at least 1", p.Multiplier)
	case p.Max < p.Initial:
		return fmt.Errorf("--backoff-max %s is below --backoff-initial %s: raise it or lower the initial delay", p.Max, p.Initial)
	}
	_, err := ParseJitter(string(p.Jitter))
	if err != nil {
		return fmt.Errorf("--jitter: %v", err)
	}
	return nil
}

// Cap returns the most retry n may wait (n = 1 is the first retry): min(Max,
// Initial*Multiplier^(n-1)), with the defaults for zero fields.
func (p Policy) Cap(n int) time.Duration {
	p = p.withDefaults()
	d := float64(p.Initial) * math.Pow(p.Multiplier, float64(max(n, 1)-1))
	if d >= float64(p.Max) {
		return p.Max
	}
	return time.Duration(d)
}

// Delay draws the wait before retry n from the policy's jitter below Cap(n), never under
// MinDelay. rnd is the random source; nil is math/rand/v2's randomly seeded one.
func (p Policy) Delay(n int, rnd *rand.Rand) time.Duration {
	p = p.withDefaults()
	c := p.Cap(n)
	lo := MinDelay
	switch p.Jitter {
	case JitterNone:
		lo = c
	case JitterEqual:
		lo = c / 2
	}
	if c <= lo {
		return max(c, MinDelay)
	}
	return max(lo+time.Duration(int64n(rnd, int64(c-lo)+1)), MinDelay)
}

// int64n draws from [0, n) with rnd, or with the global source when rnd is nil.
func int64n(rnd *rand.Rand, n int64) int64 {
	if rnd == nil {
		return rand.Int64N(n)
	}
	return rnd.Int64N(n)
}
