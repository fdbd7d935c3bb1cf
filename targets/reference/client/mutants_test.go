package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// scenario is the scripted run that shows one mutant's bug: it runs the client as mutant m
// and reports whether the bug was observed, with what it saw. show may run on any
// goroutine, so it never calls t.Fatal.
type scenario struct {
	bugOf Mutant
	show  func(t *testing.T, m Mutant) (bool, string)
}

// scenarios has one scenario per mutant, in the table's order.
func scenarios() []scenario {
	return []scenario{
		{MutantNeverRetries, showNeverRetries},
		{MutantNewKeyPerRetry, showNewKeyPerRetry},
		{MutantNoJitter, showNoJitter},
		{MutantIgnoresRetryAfter, showIgnoresRetryAfter},
		{MutantRetriesRejections, showRetriesRejections},
		{MutantUnbounded, showUnbounded},
		{MutantKeyInMemory, showKeyInMemory},
		{MutantNoKey, showNoKey},
		{MutantBodyDrift, showBodyDrift},
		{MutantKeyFromRef, showKeyFromRef},
		{MutantRetriesImmediately, showRetriesImmediately},
		{MutantRestartWithoutKey, showRestartWithoutKey},
		{MutantRetryAfter429, showRetryAfter429Ignored},
		{MutantTransportResend, showTransportResend},
		{MutantSkipsDeclaredRetry, showSkipsDeclaredRetry},
		{MutantSuccessOnBareError, showSuccessOnBareError},
		{MutantRetriesUndeclared, showRetriesUndeclared},
		{MutantIgnoresShouldRetryFalse, showIgnoresShouldRetryFalse},
		{MutantIgnoresErrorCode, showIgnoresErrorCode},
		{MutantPendingAsFailure, showPendingAsFailure},
		{MutantForgetsPending, showForgetsPending},
	}
}

// alsoShows lists, per mutant, the other scenarios its one change shows too: retrying at
// once ignores Retry-After as well (on a 503 and on a 429), ignoring every Retry-After ignores a
// 429's, a fresh key per retry is also a fresh
// key for the first retry after a restart, and never retrying never retries a 409 either.
var alsoShows = map[Mutant][]Mutant{
	MutantRetriesImmediately: {MutantIgnoresRetryAfter, MutantRetryAfter429},
	MutantNeverRetries:       {MutantSkipsDeclaredRetry},
	MutantIgnoresRetryAfter:  {MutantRetryAfter429},
	MutantNewKeyPerRetry:     {MutantKeyInMemory},
}

// TestMutantsShowTheirBugsAndNoOthers runs every scenario against the correct client and
// every mutant: each mutant's bug must show in its own scenario, and in no other except
// those alsoShows declares; the correct client must show none. So a mutant that stops
// being broken, one that changes more than its one thing, and a scenario that cannot tell
// all fail the test. The runs, mostly waiting, go concurrently (t.Parallel would run only
// GOMAXPROCS of them at a time); the verdicts are reported per client.
func TestMutantsShowTheirBugsAndNoOthers(t *testing.T) {
	t.Parallel()
	all := scenarios()
	for _, info := range Mutants {
		if !slices.ContainsFunc(all, func(s scenario) bool { return s.bugOf == info.Name }) {
			t.Errorf("mutant %s has no scenario", info.Name)
		}
	}
	type run struct{ client, bugOf Mutant }
	type showing struct {
		shown bool
		saw   string
	}
	clients := append([]Mutant{MutantNone}, mutantNames()...)
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		seen = map[run]showing{}
		sem  = make(chan struct{}, 16)
	)
	for _, m := range clients {
		for _, s := range all {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				shown, saw := s.show(t, m)
				mu.Lock()
				seen[run{m, s.bugOf}] = showing{shown, saw}
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	for _, m := range clients {
		t.Run(orCorrect(m), func(t *testing.T) {
			for _, s := range all {
				got := seen[run{m, s.bugOf}]
				want := m == s.bugOf || slices.Contains(alsoShows[m], s.bugOf)
				switch {
				case want && !got.shown:
					t.Errorf("%s does not show the bug of %s in its scenario: %s", orCorrect(m), s.bugOf, got.saw)
				case !want && got.shown:
					t.Errorf("%s shows the bug of %s: %s", orCorrect(m), s.bugOf, got.saw)
				}
			}
		})
	}
}

func TestMutantTable(t *testing.T) {
	seen := map[Mutant]bool{}
	for _, info := range Mutants {
		if seen[info.Name] || info.Bug == "" || info.CaughtBy == "" {
			t.Errorf("row %+v: names must be unique, bug and property set", info)
		}
		seen[info.Name] = true
		if got, err := ParseMutant(string(info.Name)); err != nil || got != info.Name {
			t.Errorf("ParseMutant(%q) = %q, %v", info.Name, got, err)
		}
	}
	for _, name := range []string{"", "none"} {
		if got, err := ParseMutant(name); err != nil || got != MutantNone {
			t.Errorf("ParseMutant(%q) = %q, %v; want the correct client", name, got, err)
		}
	}
	_, err := ParseMutant("no-jiter")
	if err == nil || !strings.Contains(err.Error(), "no-jitter") {
		t.Errorf("ParseMutant(no-jiter) = %v, want an error listing the known mutants", err)
	}
}

func showNeverRetries(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(503)))
	r := runClient(t.Context(), t, a, Config{Mutant: m})
	return r.sum.Failed == 1 && len(a.attempts("")) == 1, fmt.Sprintf("one 503, then 201: %q", r.out)
}

func showNewKeyPerRetry(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(503), dropStep))
	runClient(t.Context(), t, a, Config{Mutant: m})
	ks := keys(a.attempts(""))
	return len(distinct(ks)) > 1, fmt.Sprintf("keys of the attempts of one operation: %q", ks)
}

// showNoJitter shows a client that waits the cap itself before every first retry: with
// full jitter the correct client waits less than the cap, at a random point of [10ms, cap],
// so that all five of its first retries waiting the cap or more is (nearly) impossible.
func showNoJitter(t *testing.T, m Mutant) (bool, string) {
	const ops = 5
	p := Policy{Initial: 300 * time.Millisecond, Max: time.Second}
	a := newAPI(t, steps(answerWith(503)))
	runClient(t.Context(), t, a, Config{Mutant: m, Ops: Operations("order", ops), Policy: p})
	var first []time.Duration
	for i := 1; i <= ops; i++ {
		if g := gaps(a.attempts(fmt.Sprintf("order-%d", i))); len(g) > 0 {
			first = append(first, g[0])
		}
	}
	if len(first) < ops {
		return false, fmt.Sprintf("only %d operations were retried", len(first))
	}
	return slices.Min(first) >= p.Initial, fmt.Sprintf("first-retry gaps of %d operations with backoff cap %s: %v", ops, p.Initial, first)
}

func showIgnoresRetryAfter(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(503, "Retry-After", "1")))
	runClient(t.Context(), t, a, Config{Mutant: m})
	g := gaps(a.attempts(""))
	return len(g) > 0 && g[0] < time.Second, fmt.Sprintf("503 with Retry-After: 1, then the retry after %v", g)
}

func showRetryAfter429Ignored(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(429, "Retry-After", "1")))
	runClient(t.Context(), t, a, Config{Mutant: m})
	g := gaps(a.attempts(""))
	return len(g) > 0 && g[0] < time.Second, fmt.Sprintf("429 with Retry-After: 1, then the retry after %v", g)
}

func showRetriesRejections(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, func(ref string, _ int) step {
		if ref == "order-1" {
			return answerWith(400)
		}
		return answerWith(422)
	})
	runClient(t.Context(), t, a, Config{Mutant: m, Ops: Operations("order", 2)})
	n400, n422 := len(a.attempts("order-1")), len(a.attempts("order-2"))
	return n400 > 1 || n422 > 1, fmt.Sprintf("a 400 was sent %d times, a 422 %d times", n400, n422)
}

func showUnbounded(t *testing.T, m Mutant) (bool, string) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a := newAPI(t, func(_ string, n int) step {
		if n > 5 {
			cancel() // enough: it would go on for ever
		}
		return answerWith(503)
	})
	p := Policy{MaxAttempts: 3, Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}
	r := runClient(ctx, t, a, Config{Mutant: m, Policy: p})
	n := len(a.attempts(""))
	return n > p.MaxAttempts, fmt.Sprintf("always 503, max-attempts %d: %d attempts (%v)", p.MaxAttempts, n, r.err)
}

func showKeyInMemory(t *testing.T, m Mutant) (bool, string) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	a := newAPI(t, func(_ string, n int) step {
		if n == 1 {
			cancel() // stopped mid-attempt, as by a kill
			return holdStep
		}
		return okStep
	})
	runClient(ctx, t, a, Config{Mutant: m, StateDir: dir})
	runClient(t.Context(), t, a, Config{Mutant: m, StateDir: dir})
	ks := keys(a.attempts(""))
	return len(ks) > 1 && ks[1] != "" && ks[1] != ks[0], fmt.Sprintf("the held attempt's key, then the keys after the restart: %q", ks)
}

// showRestartWithoutKey shows a client whose first attempt carried its key, and whose attempt
// after a restart carries none.
func showRestartWithoutKey(t *testing.T, m Mutant) (bool, string) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	a := newAPI(t, func(_ string, n int) step {
		if n == 1 {
			cancel() // stopped mid-attempt, as by a kill
			return holdStep
		}
		return okStep
	})
	runClient(ctx, t, a, Config{Mutant: m, StateDir: dir})
	runClient(t.Context(), t, a, Config{Mutant: m, StateDir: dir})
	as := a.attempts("")
	return len(as) > 1 && as[0].hasKey && !as[1].hasKey, fmt.Sprintf("the held attempt's key, then the keys after the restart: %q", keys(as))
}

func showNoKey(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(503)))
	runClient(t.Context(), t, a, Config{Mutant: m})
	var without int
	for _, s := range a.attempts("") {
		if !s.hasKey {
			without++
		}
	}
	return without > 0, fmt.Sprintf("%d of %d attempts carry no Idempotency-Key", without, len(a.attempts("")))
}

func showBodyDrift(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(503)))
	runClient(t.Context(), t, a, Config{Mutant: m})
	var bodies []string
	for _, s := range a.attempts("") {
		bodies = append(bodies, string(s.body))
	}
	return len(distinct(bodies)) > 1, fmt.Sprintf("bodies of the attempts of one operation: %q", bodies)
}

func showKeyFromRef(t *testing.T, m Mutant) (bool, string) {
	ops := []Operation{{Ref: "order-1", Params: map[string]any{"amount": 2000}}, {Ref: "order-1", Params: map[string]any{"amount": 3000}}}
	a := newAPI(t, steps())
	runClient(t.Context(), t, a, Config{Mutant: m, Ops: ops})
	ks := keys(a.attempts("order-1"))
	return len(ks) == 2 && ks[0] != "" && ks[0] == ks[1], fmt.Sprintf("keys of two operations with one ref: %q", ks)
}

// showRetriesImmediately shows a client that does not wait at all: without jitter the
// correct client waits its 200ms cap, so a gap under half of it is no backoff.
func showRetriesImmediately(t *testing.T, m Mutant) (bool, string) {
	p := Policy{Initial: 200 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: JitterNone}
	a := newAPI(t, steps(answerWith(503), answerWith(503)))
	runClient(t.Context(), t, a, Config{Mutant: m, Policy: p})
	g := gaps(a.attempts(""))
	return len(g) > 0 && slices.Min(g) < p.Initial/2, fmt.Sprintf("gaps between attempts after 503s, with a backoff of %s: %v", p.Initial, g)
}

// showTransportResend shows a client whose attempt net/http re-sends on its own: a 503 leaves its
// connection open for reuse, the retry on it is read and its connection closed, and net/http
// sends it again: the API sees an attempt the client never counted.
func showTransportResend(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(503), dropStep))
	r := runClient(t.Context(), t, a, Config{Mutant: m})
	seen := len(a.attempts(""))
	counted := 0
	if len(r.sum.Results) == 1 {
		counted = r.sum.Results[0].Attempts
	}
	return seen > counted, fmt.Sprintf("a 503, a connection closed, then 201: the API saw %d attempts, the client counted %d (%q)", seen, counted, r.out)
}

func showSkipsDeclaredRetry(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(409)))
	r := runClient(t.Context(), t, a, Config{Mutant: m})
	return r.sum.Failed == 1 && len(a.attempts("")) == 1, fmt.Sprintf("one 409, then 201: %q", r.out)
}

// showSuccessOnBareError shows a client that reports a 503 in text/plain (a proxy's page, not
// the API's {"error": ...}) as a success.
func showSuccessOnBareError(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, always(step{status: 503, bare: "Service Unavailable"}))
	r := runClient(t.Context(), t, a, Config{Mutant: m, Policy: Policy{MaxAttempts: 2, Initial: 20 * time.Millisecond, Max: 20 * time.Millisecond}})
	return r.sum.Succeeded == 1, fmt.Sprintf("503 text/plain on every attempt: %q", r.out)
}

func showRetriesUndeclared(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(408)))
	r := runClient(t.Context(), t, a, Config{Mutant: m})
	return len(a.attempts("")) > 1, fmt.Sprintf("one 408, then 201: %d attempts, %q", len(a.attempts("")), r.out)
}

// showIgnoresShouldRetryFalse shows a client told by its should-retry header not to retry a
// 503, retrying it.
func showIgnoresShouldRetryFalse(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(answerWith(503, "Should-Retry", "false")))
	r := runClient(t.Context(), t, a, Config{Mutant: m, ShouldRetryHeader: "Should-Retry"})
	return len(a.attempts("")) > 1, fmt.Sprintf("a 503 with Should-Retry: false, then 201: %d attempts, %q", len(a.attempts("")), r.out)
}

// showIgnoresErrorCode shows a client that retries a 429 only when its code is lock_timeout
// retrying one whose code is another.
func showIgnoresErrorCode(t *testing.T, m Mutant) (bool, string) {
	when, err := ParseRetryWhen("429:$.error.code=lock_timeout")
	if err != nil {
		return false, err.Error()
	}
	rate := answerWith(429)
	rate.json = `{"error": {"code": "rate_limited"}}`
	a := newAPI(t, steps(rate))
	r := runClient(t.Context(), t, a, Config{Mutant: m, RetryWhen: []RetryWhen{when}})
	return len(a.attempts("")) > 1, fmt.Sprintf("a 429 whose code is rate_limited, then 201: %d attempts, %q", len(a.attempts("")), r.out)
}

// showPendingAsFailure shows a client out of attempts none of which was answered reporting the
// operation failed.
func showPendingAsFailure(t *testing.T, m Mutant) (bool, string) {
	a := newAPI(t, steps(dropStep, dropStep))
	r := runClient(t.Context(), t, a, Config{Mutant: m, Policy: Policy{MaxAttempts: 2, Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}})
	return r.sum.Failed == 1, fmt.Sprintf("two connections closed, then 201, 2 attempts: %q", r.out)
}

// showForgetsPending shows a client that reported an operation pending dropping it from its
// state: run again, it sends the operation under a new key.
func showForgetsPending(t *testing.T, m Mutant) (bool, string) {
	dir := t.TempDir()
	a := newAPI(t, steps(dropStep, dropStep))
	cfg := Config{Mutant: m, StateDir: dir, Policy: Policy{MaxAttempts: 2, Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}}
	first := runClient(t.Context(), t, a, cfg)
	recs, err := ReadState(dir)
	if err != nil {
		return false, err.Error()
	}
	second := runClient(t.Context(), t, a, cfg)
	ss := a.attempts("")
	forgot := first.sum.Pending == 1 && len(recs) == 0 && len(ss) == 3 && ss[2].key != ss[0].key
	return forgot, fmt.Sprintf("two connections closed (2 attempts), state %d records, then run again: keys %q; %q then %q", len(recs), keys(ss), first.out, second.out)
}

// mutantNames returns every mutant's name, in the table's order.
func mutantNames() []Mutant {
	out := make([]Mutant, len(Mutants))
	for i, info := range Mutants {
		out[i] = info.Name
	}
	return out
}

// orCorrect names a mutant in test names and messages.
func orCorrect(m Mutant) string {
	if m == MutantNone {
		return "correct"
	}
	return string(m)
}

// distinct returns the distinct values of ss.
func distinct(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}
