package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// uuidV4 matches a bare UUID v4.
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// sameKeyAndBody fails the test unless every attempt carries one UUID v4 key and
// byte-identical JSON.
func sameKeyAndBody(t *testing.T, ss []seen) {
	t.Helper()
	for i, s := range ss {
		if !uuidV4.MatchString(s.key) {
			t.Errorf("attempt %d: Idempotency-Key %q (present %v), want a bare UUID v4", i+1, s.key, s.hasKey)
		}
		if s.ctype != "application/json" {
			t.Errorf("attempt %d: Content-Type %q, want application/json", i+1, s.ctype)
		}
		if s.key != ss[0].key || !bytes.Equal(s.body, ss[0].body) {
			t.Errorf("attempt %d sent key %s body %s; attempt 1 sent key %s body %s", i+1, s.key, s.body, ss[0].key, ss[0].body)
		}
	}
}

func TestRetriesTransientWithTheSameKeyAndBody(t *testing.T) {
	t.Parallel()
	hold := fast
	hold.AttemptTimeout = time.Second // the answer after the holds must come within it on a loaded machine
	for _, tc := range []struct {
		name   string
		first  step
		policy Policy
	}{
		{"dropped response", dropStep, fast},
		{"held until the attempt timeout", holdStep, hold},
		{"500", answerWith(500), fast},
		{"502", answerWith(502), fast},
		{"503", answerWith(503), fast},
		{"409 in progress", answerWith(409), fast},
		{"429", answerWith(429), fast},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, steps(tc.first, tc.first))
			r := runClient(t.Context(), t, a, Config{Policy: tc.policy})
			if r.err != nil {
				t.Fatalf("Run: %v", r.err)
			}
			ss := a.attempts("order-1")
			if len(ss) != 3 {
				t.Fatalf("the API saw %d attempts, want 3 (two %s, then 201)\nlog:\n%s", len(ss), tc.name, r.log)
			}
			sameKeyAndBody(t, ss)
			want := "ok order-1 key=" + ss[0].key + " attempts=3\n"
			if r.out != want || r.sum.Succeeded != 1 || r.sum.Failed != 0 {
				t.Errorf("output %q, summary %+v; want %q, 1 succeeded", r.out, r.sum, want)
			}
		})
	}
}

func TestRejectionsAreNeverRetried(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 404, 422, 418, 302} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, func(ref string, _ int) step {
				if ref == "order-1" {
					return answerWith(status, "Retry-After", "1")
				}
				return okStep
			})
			r := runClient(t.Context(), t, a, Config{Ops: Operations("order", 2)})
			if r.err != nil {
				t.Fatalf("Run: %v", r.err)
			}
			if n := len(a.attempts("order-1")); n != 1 {
				t.Errorf("the API saw %d attempts of the rejected operation, want 1", n)
			}
			lines := strings.Split(strings.TrimSpace(r.out), "\n")
			want := []string{"failed order-1: " + strconv.Itoa(status) + " after 1 attempt", "ok order-2 key="}
			if len(lines) != 2 || lines[0] != want[0] || !strings.HasPrefix(lines[1], want[1]) {
				t.Errorf("output:\n%s\nwant lines %q and %q...", r.out, want[0], want[1])
			}
			if r.sum.Failed != 1 || r.sum.Succeeded != 1 {
				t.Errorf("summary %+v, want 1 failed and 1 succeeded", r.sum)
			}
		})
	}
}

func TestHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	inTwoSeconds := func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }
	for _, tc := range []struct {
		name    string
		first   func() step
		honours bool
	}{
		{"429 delta-seconds", func() step { return answerWith(429, "Retry-After", "1") }, true},
		{"503 HTTP-date", func() step { return answerWith(503, "Retry-After", inTwoSeconds()) }, true},
		{"409 delta-seconds", func() step { return answerWith(409, "Retry-After", "1") }, true},
		{"500 is not asked to wait", func() step { return answerWith(500, "Retry-After", "1") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked step
			a := newAPI(t, func(_ string, n int) step {
				if n == 1 {
					asked = tc.first()
					return asked
				}
				return okStep
			})
			r := runClient(t.Context(), t, a, Config{})
			if r.err != nil {
				t.Fatalf("Run: %v", r.err)
			}
			ss := a.attempts("order-1")
			if len(ss) != 2 {
				t.Fatalf("the API saw %d attempts, want 2", len(ss))
			}
			wait, _ := ParseRetryAfter(asked.header["Retry-After"], ss[0].at)
			notBefore := ss[0].at.Add(wait)
			if at, err := http.ParseTime(asked.header["Retry-After"]); err == nil {
				notBefore = at
			}
			early := ss[1].at.Before(notBefore)
			if tc.honours && early {
				t.Errorf("the retry came %s after the first attempt, before Retry-After %s", ss[1].at.Sub(ss[0].at), asked.header["Retry-After"])
			}
			if !tc.honours && !early {
				t.Errorf("the retry after a 500 waited %s: Retry-After is honoured on 409, 429 and 503 only", ss[1].at.Sub(ss[0].at))
			}
		})
	}
}

// An operation out of attempts is reported failed when one of them was answered, and pending
// (its line naming its key) when none was: whether the API acted is unknown.
func TestStopsAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	hold := Policy{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond, AttemptTimeout: 500 * time.Millisecond, MaxAttempts: 3}
	twice := Policy{Initial: 10 * time.Millisecond, MaxAttempts: 2}
	for _, tc := range []struct {
		name    string
		script  script
		policy  Policy
		sent    int
		want    string
		pending bool
	}{
		{"503", always(answerWith(503)), fast, 5, "failed order-1: gave up after 5 attempts: 503", false},
		{"dropped", always(dropStep), twice, 2,
			"pending order-1 key=KEY attempts=2: none of 2 attempts answered (the last: connection closed without a response): whether the API acted is unknown", true},
		{"held", always(holdStep), hold, 3,
			"pending order-1 key=KEY attempts=3: none of 3 attempts answered (the last: no answer within 500ms (attempt timeout)): whether the API acted is unknown", true},
		{"a 503, then dropped", steps(answerWith(503), dropStep, dropStep), Policy{Initial: 10 * time.Millisecond, MaxAttempts: 3}, 3,
			"failed order-1: gave up after 3 attempts: connection closed without a response", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tc.script)
			r := runClient(t.Context(), t, a, Config{Policy: tc.policy})
			if r.err != nil {
				t.Fatalf("Run: %v", r.err)
			}
			ss := a.attempts("")
			if len(ss) != tc.sent {
				t.Fatalf("the API saw %d attempts, want %d", len(ss), tc.sent)
			}
			want := strings.Replace(tc.want, "KEY", ss[0].key, 1)
			if got := strings.TrimSpace(r.out); got != want || (r.sum.Pending == 1) != tc.pending || r.sum.Failed+r.sum.Pending != 1 {
				t.Errorf("output %q, summary %+v; want %q, pending %v", got, r.sum, want, tc.pending)
			}
		})
	}
}

// An operation reported pending stays in the state directory with its key and body: the next run
// resumes it with a new budget of attempts, and it ends once.
func TestPendingIsResumedByTheNextRun(t *testing.T) {
	dir := t.TempDir()
	a := newAPI(t, steps(dropStep, dropStep))
	cfg := Config{StateDir: dir, Policy: Policy{MaxAttempts: 2, Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}}
	first := runClient(t.Context(), t, a, cfg)
	if first.err != nil || first.sum.Pending != 1 || !strings.HasPrefix(first.out, "pending order-1 ") {
		t.Fatalf("first run: %v, summary %+v, output %q; want order-1 pending", first.err, first.sum, first.out)
	}
	recs, err := ReadState(dir)
	if err != nil || len(recs) != 1 || recs[0].Status != StatusPending || recs[0].PendingAt != 2 || recs[0].Answered {
		t.Fatalf("state after the first run: %+v, %v; want order-1 pending at 2 attempts, never answered", recs, err)
	}
	second := runClient(t.Context(), t, a, cfg)
	ss := a.attempts("order-1")
	if second.err != nil || second.sum.Succeeded != 1 || len(ss) != 3 {
		t.Fatalf("second run: %v, summary %+v, %d attempts in all; want it resumed once and done", second.err, second.sum, len(ss))
	}
	sameKeyAndBody(t, ss)
	if want := "ok order-1 key=" + ss[0].key + " attempts=3\n"; second.out != want {
		t.Errorf("second run printed %q, want %q", second.out, want)
	}
}

func TestNewKeyPerOperation(t *testing.T) {
	ops, err := ParseOps([]byte(`[
		{"ref": "order-7", "params": {"amount": 2000}},
		{"ref": "order-7", "params": {"amount": 3000, "currency": "usd"}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	a := newAPI(t, steps())
	r := runClient(t.Context(), t, a, Config{Ops: ops})
	if r.err != nil || r.sum.Succeeded != 2 {
		t.Fatalf("Run: %v, summary %+v", r.err, r.sum)
	}
	ss := a.attempts("order-7")
	if len(ss) != 2 || ss[0].key == ss[1].key {
		t.Fatalf("two operations with one ref sent keys %q, want two different keys", keys(ss))
	}
	for i, want := range []map[string]any{
		{"ref": "order-7", "amount": 2000.0, "currency": "eur"},
		{"ref": "order-7", "amount": 3000.0, "currency": "usd"},
	} {
		var got map[string]any
		if err := json.Unmarshal(ss[i].body, &got); err != nil {
			t.Fatalf("operation %d: body %s: %v", i+1, ss[i].body, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, got["created_at"].(string)); err != nil {
			t.Errorf("operation %d: created_at: %v", i+1, err)
		}
		delete(got, "created_at")
		if !equalJSON(got, want) {
			t.Errorf("operation %d: body %v, want %v and created_at", i+1, got, want)
		}
	}
}

func TestDefaultOperations(t *testing.T) {
	a := newAPI(t, steps())
	r := runClient(t.Context(), t, a, Config{Ops: Operations("pay", 3)})
	if r.err != nil {
		t.Fatal(r.err)
	}
	var refs []string
	for _, s := range a.attempts("") {
		var b struct {
			Ref      string
			Amount   int
			Currency string
		}
		if err := json.Unmarshal(s.body, &b); err != nil || b.Amount != DefaultAmount || b.Currency != DefaultCurrency {
			t.Errorf("body %s (%v), want amount %d, currency %s", s.body, err, DefaultAmount, DefaultCurrency)
		}
		refs = append(refs, b.Ref)
	}
	if want := []string{"pay-1", "pay-2", "pay-3"}; !slices.Equal(refs, want) {
		t.Errorf("refs %q, want %q, in order", refs, want)
	}
}

func TestJitterSpreadsFirstRetries(t *testing.T) {
	t.Parallel()
	const ops = 8
	p := Policy{Initial: 200 * time.Millisecond, Max: time.Second}
	a := newAPI(t, steps(answerWith(503)))
	r := runClient(t.Context(), t, a, Config{Ops: Operations("order", ops), Policy: p})
	if r.err != nil || r.sum.Succeeded != ops {
		t.Fatalf("Run: %v, summary %+v", r.err, r.sum)
	}
	first := firstRetryGaps(t, a, ops)
	lo, hi := slices.Min(first), slices.Max(first)
	if lo < MinDelay || hi > p.Initial+150*time.Millisecond {
		t.Errorf("first-retry gaps %v, want each in [%s, %s] (+ scheduling)", first, MinDelay, p.Initial)
	}
	if hi-lo < 30*time.Millisecond {
		t.Errorf("first-retry gaps %v of %d operations are within %s of each other: no jitter?", first, ops, hi-lo)
	}
}

// firstRetryGaps returns, for operations order-1..order-N, the time between the first
// attempt and the first retry.
func firstRetryGaps(t *testing.T, a *api, n int) []time.Duration {
	t.Helper()
	var out []time.Duration
	for i := 1; i <= n; i++ {
		g := gaps(a.attempts("order-" + strconv.Itoa(i)))
		if len(g) == 0 {
			t.Fatalf("order-%d was not retried", i)
		}
		out = append(out, g[0])
	}
	return out
}

func TestRestartResumesThePendingOperation(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	a := newAPI(t, func(ref string, n int) step {
		if ref == "order-2" && n == 1 {
			cancel() // the client is stopped mid-attempt, as by a kill
			return holdStep
		}
		return okStep
	})
	cfg := Config{StateDir: dir, Ops: Operations("order", 3)}
	first := runClient(ctx, t, a, cfg)
	if !errors.Is(first.err, ErrInterrupted) {
		t.Fatalf("first run: %v, want ErrInterrupted", first.err)
	}
	recs, err := ReadState(dir)
	if err != nil || len(recs) != 2 || recs[1].Status != StatusPending || recs[1].Attempts != 1 {
		t.Fatalf("state after the stop: %+v (%v), want order-1 done and order-2 pending after 1 attempt", recs, err)
	}
	restarted := time.Now()
	second := runClient(t.Context(), t, a, cfg)
	if second.err != nil || second.sum.Succeeded != 3 {
		t.Fatalf("second run: %v, summary %+v", second.err, second.sum)
	}
	if n := len(a.attempts("order-1")); n != 1 {
		t.Errorf("order-1, done before the restart, was sent %d times, want once", n)
	}
	held := a.attempts("order-2")
	if len(held) != 2 {
		t.Fatalf("order-2 was sent %d times, want 2 (held, then resumed)", len(held))
	}
	sameKeyAndBody(t, held)
	if wait := held[1].at.Sub(restarted); wait < MinDelay {
		t.Errorf("order-2 was resumed %v after the restart, want its backoff first (at least %v)", wait, MinDelay)
	}
	if held[0].key != recs[1].Key || string(held[0].body) != recs[1].Body {
		t.Errorf("the held attempt sent key %s body %s; the state holds key %s body %s", held[0].key, held[0].body, recs[1].Key, recs[1].Body)
	}
	want := "ok order-1 key=" + recs[0].Key + " attempts=1\nok order-2 key=" + held[0].key + " attempts=2\n"
	if !strings.HasPrefix(second.out, want) {
		t.Errorf("second run printed:\n%s\nwant it to start with:\n%s", second.out, want)
	}
}

// A restart after the last attempt, which was never answered, reports the operation pending at
// once (max-attempts counts across restarts); the run after that resumes it.
func TestRestartAfterTheLastAttemptReportsPending(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	a := newAPI(t, func(_ string, n int) step {
		if n == 1 {
			cancel()
			return holdStep
		}
		return okStep
	})
	cfg := Config{StateDir: dir, Policy: Policy{MaxAttempts: 1, Initial: 10 * time.Millisecond}}
	if r := runClient(ctx, t, a, cfg); !errors.Is(r.err, ErrInterrupted) {
		t.Fatalf("first run: %v, want ErrInterrupted", r.err)
	}
	r := runClient(t.Context(), t, a, cfg)
	key := a.attempts("")[0].key
	want := "pending order-1 key=" + key + " attempts=1: none of 1 attempt answered (the last: the outcome of the last one is unknown (the client stopped during it)): whether the API acted is unknown\n"
	if r.err != nil || r.out != want {
		t.Errorf("second run: %v, output %q; want %q", r.err, r.out, want)
	}
	if n := len(a.attempts("")); n != 1 {
		t.Errorf("the API saw %d attempts, want 1: max-attempts counts across restarts", n)
	}
	r = runClient(t.Context(), t, a, cfg)
	if ss := a.attempts(""); r.err != nil || r.sum.Succeeded != 1 || len(ss) != 2 || ss[1].key != key {
		t.Errorf("third run: %v, summary %+v, keys %q; want order-1 resumed with key %s and done", r.err, r.sum, keys(ss), key)
	}
}

func TestARetryIsStoredWithinItsBackoff(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	a := newAPI(t, steps(answerWith(503)))
	cfg := Config{StateDir: dir, Policy: Policy{Initial: time.Minute, Jitter: JitterNone}}
	done := make(chan run, 1)
	go func() { done <- runClient(ctx, t, a, cfg) }()
	// The save of the retry runs at the start of its wait, not after it: the state counts
	// the retry while the client still waits a minute to send it.
	deadline := time.Now().Add(10 * time.Second)
	var recs []Record
	for time.Now().Before(deadline) {
		if recs, _ = ReadState(dir); len(recs) == 1 && recs[0].Attempts == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	r := <-done
	if len(recs) != 1 || recs[0].Attempts != 2 || recs[0].Status != StatusPending {
		t.Fatalf("state during the backoff: %+v, want order-1 pending with its retry counted (2 attempts)", recs)
	}
	if n := len(a.attempts("order-1")); n != 1 {
		t.Errorf("the API saw %d attempts during a minute's backoff, want 1", n)
	}
	if !errors.Is(r.err, ErrInterrupted) || !strings.Contains(r.err.Error(), "1 attempt so far") {
		t.Errorf("Run stopped during the backoff: %v, want ErrInterrupted after 1 attempt so far", r.err)
	}
}

func TestTransportNeverResendsOnAReusedConnection(t *testing.T) {
	script := func(ref string, n int) step {
		if strings.HasSuffix(ref, "-2") && n == 1 {
			return dropStep
		}
		return okStep
	}
	t.Run("control: a plain http.Client re-sends", func(t *testing.T) {
		a := newAPI(t, script)
		for _, ref := range []string{"plain-1", "plain-2"} {
			req, _ := http.NewRequest(http.MethodPost, a.srv.URL+OrdersPath, strings.NewReader(`{"ref":"`+ref+`"}`))
			req.Header.Set("Idempotency-Key", "k-"+ref)
			resp, err := a.srv.Client().Do(req)
			if err != nil {
				t.Fatalf("%s: %v", ref, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body) // read to the end, so that the connection is reused
			resp.Body.Close()
		}
		if n := len(a.attempts("plain-2")); n != 2 {
			t.Fatalf("one Do of plain-2 reached the API %d times; the control expects Go's silent re-send (2)", n)
		}
	})
	a := newAPI(t, script)
	r := runClient(t.Context(), t, a, Config{Ops: Operations("order", 2)})
	if r.err != nil || r.sum.Succeeded != 2 {
		t.Fatalf("Run: %v, summary %+v", r.err, r.sum)
	}
	ss := a.attempts("order-2")
	if len(ss) != 2 || r.sum.Results[1].Attempts != 2 {
		t.Fatalf("order-2: the API saw %d attempts and the client counted %d, want 2 and 2", len(ss), r.sum.Results[1].Attempts)
	}
	if ss[0].remote != a.attempts("order-1")[0].remote {
		t.Errorf("order-2's first attempt came on a new connection: the test did not exercise a reused one")
	}
}

// equalJSON compares two decoded JSON values.
func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// Configured, the should-retry header decides over the status both ways, and a status a
// condition names is retried only when the answer meets it; a header with another value, or none,
// leaves the status to decide.
func TestReadsTheAnswerBeforeRetrying(t *testing.T) {
	t.Parallel()
	when, err := ParseRetryWhen("429:$.error.code=lock_timeout")
	if err != nil {
		t.Fatal(err)
	}
	withJSON := func(s step, body string) step { s.json = body; return s }
	for _, tc := range []struct {
		name  string
		first step
		sent  int
	}{
		{"a 400 the header says to retry", answerWith(400, "Should-Retry", "true"), 2},
		{"a 503 the header says not to", answerWith(503, "Should-Retry", "FALSE"), 1},
		{"a 503 with another value", answerWith(503, "Should-Retry", "maybe"), 2},
		{"a 429 whose code is lock_timeout", withJSON(answerWith(429), `{"error": {"code": "lock_timeout"}}`), 2},
		{"a 429 with another code", withJSON(answerWith(429), `{"error": {"code": "rate_limited"}}`), 1},
		{"a 429 with no code, the header says to retry", answerWith(429, "Should-Retry", "true"), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, steps(tc.first))
			r := runClient(t.Context(), t, a, Config{ShouldRetryHeader: "Should-Retry", RetryWhen: []RetryWhen{when}})
			if n := len(a.attempts("")); n != tc.sent {
				t.Errorf("%d attempts, want %d (%q)", n, tc.sent, r.out)
			}
		})
	}
	for _, bad := range []string{"429", "429:$.error.code", "200:$.code=x", "x:$.code=y", "429:$[=x"} {
		if _, err := ParseRetryWhen(bad); err == nil {
			t.Errorf("ParseRetryWhen(%q) accepted", bad)
		}
	}
}
