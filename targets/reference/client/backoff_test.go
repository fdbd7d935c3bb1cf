package client

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestPolicyCap(t *testing.T) {
	p := Policy{Initial: 100 * ms, Multiplier: 2, Max: 2 * time.Second}
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{1, 100 * ms}, {2, 200 * ms}, {3, 400 * ms}, {4, 800 * ms}, {5, 1600 * ms}, {6, 2 * time.Second},
		{60, 2 * time.Second}, {10000, 2 * time.Second}, {0, 100 * ms},
	} {
		if got := p.Cap(tc.n); got != tc.want {
			t.Errorf("Cap(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
	if got := (Policy{}).Cap(3); got != 400*ms {
		t.Errorf("the default policy's Cap(3) = %s, want 400ms (100ms * 2^2)", got)
	}
	if got := (Policy{Initial: 10 * ms, Multiplier: 1.5, Max: time.Second}).Cap(3); got != 22500*time.Microsecond {
		t.Errorf("Cap(3) with multiplier 1.5 = %s, want 22.5ms", got)
	}
}

func TestPolicyDelayStaysInItsRange(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		jitter  Jitter
		initial time.Duration
		n       int
		lo, hi  time.Duration
	}{
		{JitterFull, 100 * ms, 1, MinDelay, 100 * ms},
		{JitterFull, 100 * ms, 3, MinDelay, 400 * ms},
		{JitterEqual, 100 * ms, 2, 100 * ms, 200 * ms},
		{JitterNone, 100 * ms, 2, 200 * ms, 200 * ms},
		{JitterFull, 2 * ms, 1, MinDelay, MinDelay}, // the floor
		{JitterEqual, 4 * ms, 1, MinDelay, MinDelay},
		{JitterNone, 1 * ms, 1, MinDelay, MinDelay},
	} {
		p := Policy{Initial: tc.initial, Jitter: tc.jitter}
		gotLo, gotHi := time.Duration(1<<62), time.Duration(0)
		for range 2000 {
			d := p.Delay(tc.n, rnd)
			gotLo, gotHi = min(gotLo, d), max(gotHi, d)
		}
		if gotLo < tc.lo || gotHi > tc.hi {
			t.Errorf("%s jitter, initial %s, retry %d: delays in [%s, %s], want within [%s, %s]", tc.jitter, tc.initial, tc.n, gotLo, gotHi, tc.lo, tc.hi)
		}
		// 2000 uniform draws come within 2% of both ends of their range.
		slack := (tc.hi - tc.lo) / 50
		if gotLo > tc.lo+slack || gotHi < tc.hi-slack {
			t.Errorf("%s jitter, initial %s, retry %d: delays in [%s, %s], want them to cover [%s, %s]", tc.jitter, tc.initial, tc.n, gotLo, gotHi, tc.lo, tc.hi)
		}
	}
}

func TestPolicyDelayUsesARandomSeed(t *testing.T) {
	p := Policy{Initial: time.Second}
	a, b := p.Delay(1, nil), p.Delay(1, nil)
	c := p.Delay(1, nil)
	if a == b && b == c {
		t.Errorf("three full-jitter delays from the global source are all %s", a)
	}
}

func TestPolicyCheck(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string // "" = valid
	}{
		{Policy{}, ""},
		{Policy{MaxAttempts: 1, Initial: ms, Max: ms, Multiplier: 1, Jitter: JitterNone}, ""},
		{Policy{Initial: 5 * time.Second}, ""}, // Max follows a larger initial
		{Policy{MaxAttempts: -1}, "--max-attempts -1: at least 1"},
		{Policy{AttemptTimeout: -time.Second}, "--attempt-timeout -1s"},
		{Policy{Initial: -ms}, "--backoff-initial -1ms"},
		{Policy{Multiplier: 0.5}, "--backoff-multiplier 0.5: must be a finite number of at least 1"},
		{Policy{Initial: time.Second, Max: 100 * ms}, "--backoff-max 100ms is below --backoff-initial 1s"},
		{Policy{Jitter: "half"}, `--jitter: unknown jitter "half" (known: full, equal, none)`},
	} {
		err := tc.p.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tc.p, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want an error with %q", tc.p, err, tc.want)
		}
	}
}

func TestParseJitter(t *testing.T) {
	for in, want := range map[string]Jitter{"": JitterFull, "full": JitterFull, "equal": JitterEqual, "none": JitterNone} {
		if got, err := ParseJitter(in); err != nil || got != want {
			t.Errorf("ParseJitter(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseJitter("Full"); err == nil {
		t.Error("ParseJitter(Full) succeeded; names are lower case")
	}
}
