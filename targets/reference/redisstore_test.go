package reference

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit/storekittest"
)

// testRedisURL is RETRYSAFE_REDIS_URL, or the default local Redis.
func testRedisURL() string { return storekit.RedisURL() }

// testRedisPrefix returns a fresh random key prefix whose keys are deleted when the test
// ends.
func testRedisPrefix(t *testing.T) string {
	t.Helper()
	return storekittest.RedisPrefix(t, "retrysafe-test:")
}

// openTestRedis opens a RedisStore on prefix, failing the test when Redis is not there.
func openTestRedis(t *testing.T, prefix string) *RedisStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := OpenRedis(ctx, testRedisURL(), prefix)
	if err != nil {
		t.Fatalf("Redis store tests need a Redis at %s (set RETRYSAFE_REDIS_URL to use another): %v",
			testRedisURL(), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newTestRedis opens a RedisStore on a fresh prefix.
func newTestRedis(t *testing.T) *RedisStore {
	t.Helper()
	return openTestRedis(t, testRedisPrefix(t))
}

// TestRedisStoreContract runs the shared Store behaviours against Redis, each case on
// its own key prefix.
func TestRedisStoreContract(t *testing.T) {
	runStoreContract(t, func(t *testing.T) Store { return newTestRedis(t) })
}

// t0 has a sub-millisecond part (stores keep microseconds): boundaries must be exact.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)

// tok0 is the token of a key first claimed at t0.
var tok0 = initialToken(t0)

func claimAt(t *testing.T, s Store, scope, fp string, now time.Time) ClaimResult {
	t.Helper()
	res, err := s.Claim(context.Background(), ClaimRequest{Scope: scope, Fingerprint: fp, Now: now,
		Retention: time.Hour, LockTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("claim %s at %v: %v", scope, now, err)
	}
	return res
}

func wantOutcome(t *testing.T, got ClaimResult, want ClaimOutcome) {
	t.Helper()
	if got.Outcome != want {
		t.Fatalf("outcome %v, want %v (%+v)", got.Outcome, want, got)
	}
}

func complete(t *testing.T, s Store, c Completion) bool {
	t.Helper()
	ok, err := s.Complete(context.Background(), c)
	if err != nil {
		t.Fatalf("complete %+v: %v", c, err)
	}
	return ok
}

func records(t *testing.T, s Store, tenant, kind, ref string) []Record {
	t.Helper()
	recs, err := s.Records(context.Background(), tenant, kind, ref)
	if err != nil {
		t.Fatalf("records: %v", err)
	}
	return recs
}

func lookup(t *testing.T, s Store, scope string) *KeyRow {
	t.Helper()
	row, err := s.Lookup(context.Background(), scope)
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	return row
}

func order(id, ref string, created time.Time) *Record {
	return &Record{ID: id, Tenant: "alice", Kind: "orders", Ref: ref, Amount: 1250, Currency: "EUR", Created: created}
}

func TestRedisClaimCompleteReplay(t *testing.T) {
	s := newTestRedis(t)
	res := claimAt(t, s, "k1", "fpA", t0)
	wantOutcome(t, res, Claimed)
	if res.Token != tok0 {
		t.Fatalf("first token %d, want %d", res.Token, tok0)
	}
	wantOutcome(t, claimAt(t, s, "k1", "fpA", t0.Add(time.Second)), InFlight)
	wantOutcome(t, claimAt(t, s, "k1", "fpB", t0.Add(time.Second)), Mismatch)
	row := lookup(t, s, "k1")
	if row == nil || row.State != StateInProgress || row.Token != tok0 || row.Fingerprint != "fpA" ||
		!row.CreatedAt.Equal(t0) || !row.LockedAt.Equal(t0) {
		t.Fatalf("in-progress row %+v", row)
	}
	body := []byte("{\"id\":\"ord_1\"}\x00\xff\n")
	rec := order("ord_1", "r1", t0)
	if !complete(t, s, Completion{Scope: "k1", Token: tok0, Now: t0, Record: rec, Response: Response{Status: 201, Body: body}}) {
		t.Fatal("complete with the claim's token was fenced")
	}
	res = claimAt(t, s, "k1", "fpA", t0.Add(time.Minute))
	wantOutcome(t, res, Completed)
	if res.Response.Status != 201 || !bytes.Equal(res.Response.Body, body) {
		t.Fatalf("replay %d %q, want 201 %q", res.Response.Status, res.Response.Body, body)
	}
	wantOutcome(t, claimAt(t, s, "k1", "fpB", t0.Add(time.Minute)), Mismatch)
	if row := lookup(t, s, "k1"); row.State != StateDone || !bytes.Equal(row.Response.Body, body) {
		t.Fatalf("done row %+v", row)
	}
	recs := records(t, s, "alice", "orders", "r1")
	if len(recs) != 1 || recs[0] != *rec {
		t.Fatalf("records %+v, want [%+v]", recs, *rec)
	}
	if complete(t, s, Completion{Scope: "k1", Token: tok0, Now: t0, Record: order("ord_2", "r1", t0)}) {
		t.Fatal("second complete of a done key succeeded")
	}
	if complete(t, s, Completion{Scope: "nokey", Token: tok0, Now: t0, Record: order("ord_3", "r1", t0)}) {
		t.Fatal("complete of an unclaimed key succeeded")
	}
	if n := len(records(t, s, "alice", "orders", "r1")); n != 1 {
		t.Fatalf("%d records after fenced completes, want 1", n)
	}
	if row := lookup(t, s, "missing"); row != nil {
		t.Fatalf("lookup of a missing key: %+v", row)
	}
}

func TestRedisTakeoverFencesOldToken(t *testing.T) {
	s := newTestRedis(t)
	wantOutcome(t, claimAt(t, s, "k", "fp", t0), Claimed)
	wantOutcome(t, claimAt(t, s, "k", "fp", t0.Add(30*time.Second-time.Nanosecond)), InFlight)
	res := claimAt(t, s, "k", "fp", t0.Add(30*time.Second))
	wantOutcome(t, res, Claimed)
	if res.Token != tok0+1 {
		t.Fatalf("takeover token %d, want %d", res.Token, tok0+1)
	}
	if complete(t, s, Completion{Scope: "k", Token: tok0, Now: t0, Record: order("old", "r", t0)}) {
		t.Fatal("the fenced attempt completed the key")
	}
	if !complete(t, s, Completion{Scope: "k", Token: tok0 + 1, Now: t0, Record: order("new", "r", t0)}) {
		t.Fatal("the takeover attempt was fenced")
	}
	if recs := records(t, s, "alice", "orders", "r"); len(recs) != 1 || recs[0].ID != "new" {
		t.Fatalf("records %+v, want only new", recs)
	}
	// No lock timeout: an in-progress key is never taken over.
	wantOutcome(t, claimAt(t, s, "k2", "fp", t0), Claimed)
	res, err := s.Claim(context.Background(), ClaimRequest{Scope: "k2", Fingerprint: "fp", Now: t0.Add(1000 * time.Hour)})
	if err != nil || res.Outcome != InFlight {
		t.Fatalf("claim without lock timeout or retention: %+v %v, want in-flight", res, err)
	}
}

func TestRedisExpiry(t *testing.T) {
	s := newTestRedis(t)
	wantOutcome(t, claimAt(t, s, "k", "fpA", t0), Claimed)
	complete(t, s, Completion{Scope: "k", Token: tok0, Now: t0, Response: Response{Status: 500, Body: []byte("x")}})
	wantOutcome(t, claimAt(t, s, "k", "fpB", t0.Add(time.Hour-time.Nanosecond)), Mismatch)
	wantOutcome(t, claimAt(t, s, "k", "fpA", t0.Add(time.Hour-time.Nanosecond)), Completed)
	res := claimAt(t, s, "k", "fpB", t0.Add(time.Hour))
	wantOutcome(t, res, Claimed)
	row := lookup(t, s, "k")
	if res.Token != tok0+1 || row.State != StateInProgress || row.Fingerprint != "fpB" || row.Response.Body != nil ||
		!row.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("reset row %+v (token %d)", row, res.Token)
	}
	ttl := s.rdb.PTTL(context.Background(), s.keyKey("k")).Val()
	if ttl < 2*time.Hour-time.Minute || ttl > 2*time.Hour {
		t.Fatalf("key TTL %v, want about 2h", ttl)
	}
	// Retention <= 0: never expires, and Redis keeps the key without a TTL.
	ctx := context.Background()
	s.Claim(ctx, ClaimRequest{Scope: "forever", Fingerprint: "fp", Now: t0})
	res, err := s.Claim(ctx, ClaimRequest{Scope: "forever", Fingerprint: "other", Now: t0.Add(1e6 * time.Hour)})
	if err != nil || res.Outcome != Mismatch {
		t.Fatalf("claim without retention: %+v %v, want mismatch", res, err)
	}
	if ttl := s.rdb.PTTL(ctx, s.keyKey("forever")).Val(); ttl != -1 {
		t.Fatalf("key without retention has TTL %v", ttl)
	}
}

func TestRedisSplitAndForce(t *testing.T) {
	s := newTestRedis(t)
	wantOutcome(t, claimAt(t, s, "split", "fp", t0), Claimed)
	if !complete(t, s, Completion{Scope: "split", Token: tok0, Now: t0, Split: true, Record: order("s1", "r", t0),
		Response: Response{Status: 201, Body: []byte("s")}}) {
		t.Fatal("split complete fenced")
	}
	wantOutcome(t, claimAt(t, s, "split", "fp", t0), Completed)
	if complete(t, s, Completion{Scope: "split", Token: 7, Now: t0, Split: true, Record: order("s2", "r", t0)}) {
		t.Fatal("fenced split complete succeeded")
	}
	// The split record commits on its own, before the key is checked: the mutant's bug.
	if n := len(records(t, s, "alice", "orders", "r")); n != 2 {
		t.Fatalf("%d records after a fenced split complete, want 2", n)
	}
	// Force: no claim, no check, on a new key and over another attempt's claim.
	for i, scope := range []string{"forced", "split"} {
		if !complete(t, s, Completion{Scope: scope, Fingerprint: "fpF", Now: t0, Force: true,
			Record: order(fmt.Sprint("f", i), "r", t0), Response: Response{Status: 201, Body: []byte("f")}}) {
			t.Fatal("forced complete reported false")
		}
	}
	res := claimAt(t, s, "forced", "fpF", t0)
	wantOutcome(t, res, Completed)
	if string(res.Response.Body) != "f" {
		t.Fatalf("forced replay %q", res.Response.Body)
	}
	if n := len(records(t, s, "alice", "orders", "r")); n != 4 {
		t.Fatalf("%d records, want 4 (s1, s2, f0, f1)", n)
	}
}

func TestRedisRelease(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	wantOutcome(t, claimAt(t, s, "k", "fp", t0), Claimed)
	if err := s.Release(ctx, "k", tok0+1); err != nil || lookup(t, s, "k") == nil {
		t.Fatalf("release with a wrong token deleted the claim (err %v)", err)
	}
	if err := s.Release(ctx, "k", tok0); err != nil || lookup(t, s, "k") != nil {
		t.Fatalf("release with the token kept the claim (err %v)", err)
	}
	wantOutcome(t, claimAt(t, s, "k", "fp", t0), Claimed)
	complete(t, s, Completion{Scope: "k", Token: tok0, Now: t0})
	if err := s.Release(ctx, "k", tok0); err != nil || lookup(t, s, "k") == nil {
		t.Fatalf("release deleted a done key (err %v)", err)
	}
}

func TestRedisRecordsAndPrune(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	for i, at := range []time.Duration{3, 1, 2, 1} {
		r := Record{ID: fmt.Sprint("o", i), Tenant: "alice", Kind: "orders", Ref: "r", Amount: int64(-i),
			Currency: "EUR", Created: t0.Add(at * time.Second)}
		if err := s.AddRecord(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// Index keys must not collide: ("a","bc") vs ("ab","c").
	s.AddRecord(ctx, Record{ID: "x1", Tenant: "a", Kind: "bcr", Ref: "", Created: t0})
	s.AddRecord(ctx, Record{ID: "x2", Tenant: "ab", Kind: "cr", Ref: "", Created: t0})
	var ids []string
	for _, r := range records(t, s, "alice", "orders", "r") {
		ids = append(ids, r.ID)
	}
	if fmt.Sprint(ids) != "[o1 o3 o2 o0]" {
		t.Fatalf("record order %v, want [o1 o3 o2 o0]", ids)
	}
	if n := len(records(t, s, "a", "bcr", "")); n != 1 {
		t.Fatalf("%d records for (a, bcr), want 1", n)
	}
	if n := len(records(t, s, "bob", "orders", "r")); n != 0 {
		t.Fatalf("bob sees %d records", n)
	}
	wantOutcome(t, claimAt(t, s, "old", "fp", t0), Claimed)
	wantOutcome(t, claimAt(t, s, "new", "fp", t0.Add(time.Minute)), Claimed)
	n, err := s.Prune(ctx, t0.Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("prune: %d %v, want 1", n, err)
	}
	if lookup(t, s, "old") != nil || lookup(t, s, "new") == nil {
		t.Fatal("prune deleted the wrong keys")
	}
	if n := len(records(t, s, "alice", "orders", "r")); n != 4 {
		t.Fatalf("prune deleted records: %d left", n)
	}
}

// TestRedisConcurrentClaims races 16 claims of one scope per round, spread over two
// store clients on the same prefix (two instances of one service): exactly one wins,
// and of a takeover race plus the two completes, exactly one record commits.
func TestRedisConcurrentClaims(t *testing.T) {
	prefix := testRedisPrefix(t)
	stores := []Store{openTestRedis(t, prefix), openTestRedis(t, prefix)}
	ctx := context.Background()
	const workers, rounds = 16, 40
	for round := range rounds {
		scope := fmt.Sprint("race-", round)
		now := t0
		if round%2 == 1 { // odd rounds race a takeover of a stale claim
			wantOutcome(t, claimAt(t, stores[0], scope, "fp", t0), Claimed)
			now = t0.Add(time.Minute)
		}
		start := make(chan struct{})
		results := make([]ClaimResult, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				<-start
				results[w], errs[w] = stores[w%2].Claim(ctx, ClaimRequest{Scope: scope, Fingerprint: "fp",
					Now: now, Retention: time.Hour, LockTimeout: 30 * time.Second})
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		var token int64
		for w, res := range results {
			if errs[w] != nil {
				t.Fatalf("round %d: claim: %v", round, errs[w])
			}
			switch res.Outcome {
			case Claimed:
				winners++
				token = res.Token
			case InFlight:
			default:
				t.Fatalf("round %d: outcome %v", round, res.Outcome)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d claims won, want exactly 1", round, winners)
		}
		if round%2 == 1 {
			var oks [2]bool
			wg.Go(func() {
				oks[0] = complete(t, stores[0], Completion{Scope: scope, Token: tok0, Now: now, Record: order("o", scope, now)})
			})
			wg.Go(func() {
				oks[1] = complete(t, stores[1], Completion{Scope: scope, Token: token, Now: now, Record: order("n", scope, now)})
			})
			wg.Wait()
			recs := records(t, stores[0], "alice", "orders", scope)
			if oks[0] || !oks[1] || len(recs) != 1 || recs[0].ID != "n" {
				t.Fatalf("round %d: completes %v, records %+v: want only the takeover's", round, oks, recs)
			}
		}
	}
}

func TestRedisOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := OpenRedis(ctx, "not a url", ""); err == nil {
		t.Fatal("OpenRedis accepted a bad URL")
	}
	if _, err := OpenRedis(ctx, "redis://127.0.0.1:1/0", ""); err == nil {
		t.Fatal("OpenRedis succeeded against a closed port")
	}
	s := openTestRedis(t, "")
	if s.prefix != DefaultRedisPrefix {
		t.Fatalf("default prefix %q", s.prefix)
	}
}
