package reference

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit/storekittest"
)

// scBase is the fixed clock of the contract: every case passes Now explicitly.
var scBase = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// storeContract is one behaviour every Store must show, run on a fresh store.
type storeContract struct {
	name string
	run  func(t *testing.T, s Store)
}

// runStoreContract runs the shared behaviour table against fresh stores made by open.
// It relies only on the Store interface, so every backend (memory, SQL, Redis) can use it.
func runStoreContract(t *testing.T, open func(t *testing.T) Store) {
	t.Helper()
	for _, c := range storeContracts() {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			c.run(t, s)
		})
	}
}

func storeContracts() []storeContract {
	return []storeContract{
		{"NewClaim", scNewClaim},
		{"ReplayDone", scReplayDone},
		{"Mismatch", scMismatch},
		{"InFlight", scInFlight},
		{"TakeoverFencesOldToken", scTakeover},
		{"ExpiryResets", scExpiry},
		{"NoExpiryNoTakeover", scNoExpiry},
		{"CompleteAtomic", scCompleteAtomic},
		{"Split", scSplit},
		{"Force", scForce},
		{"Release", scRelease},
		{"RecordsFiltered", scRecordsFiltered},
		{"Prune", scPrune},
		{"ConcurrentClaim", scConcurrentClaim},
		{"ConcurrentTakeover", scConcurrentTakeover},
		{"OutboxWithTheRecord", scOutboxWithRecord},
		{"OutboxMarkSent", scOutboxMarkSent},
		{"OutboxSplitForceAdd", scOutboxSplitForceAdd},
		{"OutboxPrune", scOutboxPrune},
	}
}

// --- helpers ---

func scAt(d time.Duration) time.Time { return scBase.Add(d) }

func scReq(scope, fp string, now time.Time) ClaimRequest {
	return ClaimRequest{Scope: scope, Fingerprint: fp, Now: now, Retention: time.Hour, LockTimeout: 30 * time.Second}
}

func scClaim(t *testing.T, s Store, req ClaimRequest, want ClaimOutcome) ClaimResult {
	t.Helper()
	res, err := s.Claim(context.Background(), req)
	if err != nil {
		t.Fatalf("Claim(%q): %v", req.Scope, err)
	}
	if res.Outcome != want {
		t.Fatalf("Claim(%q, fp %q, now %v) = %v, want %v", req.Scope, req.Fingerprint, req.Now, res.Outcome, want)
	}
	if want == Claimed && res.Token == 0 {
		t.Fatalf("Claim(%q) claimed with token 0", req.Scope)
	}
	return res
}

func scComplete(t *testing.T, s Store, c Completion, want bool) {
	t.Helper()
	ok, err := s.Complete(context.Background(), c)
	if err != nil {
		t.Fatalf("Complete(%q, token %d): %v", c.Scope, c.Token, err)
	}
	if ok != want {
		t.Fatalf("Complete(%q, token %d) = %v, want %v", c.Scope, c.Token, ok, want)
	}
}

func scLookup(t *testing.T, s Store, scope string) *KeyRow {
	t.Helper()
	row, err := s.Lookup(context.Background(), scope)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", scope, err)
	}
	return row
}

func scRecords(t *testing.T, s Store, tenant, kind, ref string) []Record {
	t.Helper()
	recs, err := s.Records(context.Background(), tenant, kind, ref)
	if err != nil {
		t.Fatalf("Records(%q, %q, %q): %v", tenant, kind, ref, err)
	}
	return recs
}

func scRecord(id, ref string, created time.Time) *Record {
	return &Record{ID: id, Tenant: "alice", Kind: "orders", Ref: ref, Amount: 1250, Currency: "EUR", Created: created}
}

func scCompletion(scope string, token int64, now time.Time, rec *Record, body string) Completion {
	return Completion{Scope: scope, Token: token, Fingerprint: "fp", Now: now, Record: rec,
		Response: Response{Status: 201, Body: []byte(body)}}
}

func scWantResponse(t *testing.T, got Response, status int, body string) {
	t.Helper()
	if got.Status != status || !bytes.Equal(got.Body, []byte(body)) {
		t.Fatalf("response = %d %q, want %d %q", got.Status, got.Body, status, body)
	}
}

func scWantRecords(t *testing.T, s Store, ref string, n int) []Record {
	t.Helper()
	recs := scRecords(t, s, "alice", "orders", ref)
	if len(recs) != n {
		t.Fatalf("Records(alice, orders, %q) has %d records, want %d: %+v", ref, len(recs), n, recs)
	}
	return recs
}

// --- the behaviours ---

func scNewClaim(t *testing.T, s Store) {
	if row := scLookup(t, s, "k"); row != nil {
		t.Fatalf("Lookup of an unknown scope = %+v, want nil", row)
	}
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	row := scLookup(t, s, "k")
	if row == nil {
		t.Fatal("Lookup after claim = nil")
	}
	if row.Scope != "k" || row.Fingerprint != "fp" || row.State != StateInProgress || row.Token != res.Token {
		t.Fatalf("row = %+v, want in progress with fp and token %d", row, res.Token)
	}
	if !row.CreatedAt.Equal(scAt(0)) || !row.LockedAt.Equal(scAt(0)) {
		t.Fatalf("row times = %v / %v, want %v", row.CreatedAt, row.LockedAt, scAt(0))
	}
	scClaim(t, s, scReq("other", "fp", scAt(0)), Claimed) // scopes are independent
}

func scReplayDone(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	scComplete(t, s, scCompletion("k", res.Token, scAt(time.Second), scRecord("r1", "ref", scAt(0)), `{"id":"r1"}`), true)
	for i := range 3 {
		got := scClaim(t, s, scReq("k", "fp", scAt(time.Duration(i+2)*time.Second)), Completed)
		scWantResponse(t, got.Response, 201, `{"id":"r1"}`)
	}
	scWantRecords(t, s, "ref", 1)
}

func scMismatch(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	scClaim(t, s, scReq("k", "other", scAt(time.Second)), Mismatch) // in progress
	scComplete(t, s, scCompletion("k", res.Token, scAt(time.Second), nil, "ok"), true)
	scClaim(t, s, scReq("k", "other", scAt(59*time.Minute)), Mismatch) // done, still live
	scClaim(t, s, scReq("k", "fp", scAt(59*time.Minute)), Completed)
}

func scInFlight(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	scClaim(t, s, scReq("k", "fp", scAt(time.Second)), InFlight)
	scClaim(t, s, scReq("k", "fp", scAt(29*time.Second)), InFlight)
	if row := scLookup(t, s, "k"); row.Token != res.Token || row.State != StateInProgress {
		t.Fatalf("in-flight claims changed the row: %+v", row)
	}
}

func scTakeover(t *testing.T, s Store) {
	first := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	scClaim(t, s, scReq("k", "fp", scAt(30*time.Second-time.Millisecond)), InFlight)
	second := scClaim(t, s, scReq("k", "fp", scAt(30*time.Second)), Claimed)
	if second.Token <= first.Token {
		t.Fatalf("takeover token %d, want > %d", second.Token, first.Token)
	}
	row := scLookup(t, s, "k")
	if row.Token != second.Token || row.State != StateInProgress || !row.LockedAt.Equal(scAt(30*time.Second)) {
		t.Fatalf("row after takeover = %+v", row)
	}
	// The stale first attempt wakes up: fenced, no record, the key untouched.
	scComplete(t, s, scCompletion("k", first.Token, scAt(40*time.Second), scRecord("old", "ref", scAt(40*time.Second)), "old"), false)
	scWantRecords(t, s, "ref", 0)
	if row := scLookup(t, s, "k"); row.State != StateInProgress || row.Token != second.Token {
		t.Fatalf("fenced completion changed the row: %+v", row)
	}
	scComplete(t, s, scCompletion("k", second.Token, scAt(41*time.Second), scRecord("new", "ref", scAt(41*time.Second)), "new"), true)
	recs := scWantRecords(t, s, "ref", 1)
	if recs[0].ID != "new" {
		t.Fatalf("record = %+v, want the second attempt's", recs[0])
	}
	got := scClaim(t, s, scReq("k", "fp", scAt(time.Minute)), Completed)
	scWantResponse(t, got.Response, 201, "new")
}

func scExpiry(t *testing.T, s Store) {
	first := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	scComplete(t, s, scCompletion("k", first.Token, scAt(time.Second), nil, "first"), true)
	scClaim(t, s, scReq("k", "fp2", scAt(time.Hour-time.Millisecond)), Mismatch)
	second := scClaim(t, s, scReq("k", "fp2", scAt(time.Hour)), Claimed) // expired: a new key
	if second.Token <= first.Token {
		t.Fatalf("reset token %d, want > %d", second.Token, first.Token)
	}
	row := scLookup(t, s, "k")
	if row.Fingerprint != "fp2" || row.State != StateInProgress || row.Token != second.Token ||
		!row.CreatedAt.Equal(scAt(time.Hour)) || !row.LockedAt.Equal(scAt(time.Hour)) ||
		row.Response.Status != 0 || len(row.Response.Body) != 0 {
		t.Fatalf("row after expiry reset = %+v", row)
	}
	scComplete(t, s, scCompletion("k", first.Token, scAt(time.Hour), nil, "stale"), false)
	scComplete(t, s, scCompletion("k", second.Token, scAt(time.Hour), nil, "second"), true)
	got := scClaim(t, s, scReq("k", "fp2", scAt(time.Hour+time.Second)), Completed)
	scWantResponse(t, got.Response, 201, "second")
	// An in-progress key also expires.
	scClaim(t, s, scReq("p", "fp", scAt(0)), Claimed)
	req := scReq("p", "fp3", scAt(time.Hour))
	req.LockTimeout = 0
	scClaim(t, s, req, Claimed)
}

func scNoExpiry(t *testing.T, s Store) {
	forever := func(scope, fp string, now time.Time) ClaimRequest {
		return ClaimRequest{Scope: scope, Fingerprint: fp, Now: now}
	}
	late := scAt(10000 * time.Hour)
	res := scClaim(t, s, forever("k", "fp", scAt(0)), Claimed)
	scClaim(t, s, forever("k", "fp", late), InFlight)
	scClaim(t, s, forever("k", "fp2", late), Mismatch)
	scComplete(t, s, scCompletion("k", res.Token, late, nil, "done"), true)
	got := scClaim(t, s, forever("k", "fp", late.Add(time.Hour)), Completed)
	scWantResponse(t, got.Response, 201, "done")
	scClaim(t, s, forever("k", "fp2", late.Add(time.Hour)), Mismatch)
}

func scCompleteAtomic(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	rec := scRecord("ord_1", "ref", scAt(time.Second))
	scComplete(t, s, scCompletion("k", res.Token, scAt(time.Second), rec, `{"id":"ord_1"}`), true)
	recs := scWantRecords(t, s, "ref", 1)
	if got := recs[0]; got.ID != rec.ID || got.Tenant != rec.Tenant || got.Kind != rec.Kind ||
		got.Ref != rec.Ref || got.Amount != rec.Amount || got.Currency != rec.Currency || !got.Created.Equal(rec.Created) {
		t.Fatalf("record = %+v, want %+v", got, *rec)
	}
	row := scLookup(t, s, "k")
	if row.State != StateDone || row.Token != res.Token {
		t.Fatalf("row after complete = %+v", row)
	}
	scWantResponse(t, row.Response, 201, `{"id":"ord_1"}`)
	// A second completion with the same token, or of an unknown key, is fenced.
	scComplete(t, s, scCompletion("k", res.Token, scAt(2*time.Second), scRecord("ord_2", "ref", scAt(0)), "x"), false)
	scComplete(t, s, scCompletion("nokey", 1, scAt(2*time.Second), scRecord("ord_3", "ref", scAt(0)), "x"), false)
	scWantRecords(t, s, "ref", 1)
	// An error result: stored, replayed, no record.
	res = scClaim(t, s, scReq("e", "fp", scAt(0)), Claimed)
	c := scCompletion("e", res.Token, scAt(time.Second), nil, `{"error":"downstream"}`)
	c.Response.Status = 502
	scComplete(t, s, c, true)
	got := scClaim(t, s, scReq("e", "fp", scAt(2*time.Second)), Completed)
	scWantResponse(t, got.Response, 502, `{"error":"downstream"}`)
}

func scSplit(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	c := scCompletion("k", res.Token, scAt(time.Second), scRecord("r1", "ref", scAt(time.Second)), "split")
	c.Split = true
	scComplete(t, s, c, true)
	scWantRecords(t, s, "ref", 1)
	if row := scLookup(t, s, "k"); row.State != StateDone {
		t.Fatalf("row after split completion = %+v", row)
	}
	got := scClaim(t, s, scReq("k", "fp", scAt(2*time.Second)), Completed)
	scWantResponse(t, got.Response, 201, "split")
	// A fenced split completion reports false and leaves the key alone (whether its record
	// landed is the mutant's business).
	stale := scCompletion("k", res.Token, scAt(3*time.Second), scRecord("r2", "ref", scAt(3*time.Second)), "stale")
	stale.Split = true
	scComplete(t, s, stale, false)
	if row := scLookup(t, s, "k"); row.State != StateDone || !bytes.Equal(row.Response.Body, []byte("split")) {
		t.Fatalf("fenced split completion changed the key: %+v", row)
	}
}

func scForce(t *testing.T, s Store) {
	c := scCompletion("k", 0, scAt(0), scRecord("r1", "ref", scAt(0)), "forced")
	c.Force = true
	scComplete(t, s, c, true)
	row := scLookup(t, s, "k")
	if row == nil || row.State != StateDone || row.Fingerprint != "fp" {
		t.Fatalf("row after forced completion = %+v", row)
	}
	got := scClaim(t, s, scReq("k", "fp", scAt(time.Second)), Completed)
	scWantResponse(t, got.Response, 201, "forced")
	// Without any check a second forced completion writes a second record: the race bug.
	c2 := scCompletion("k", 0, scAt(time.Second), scRecord("r2", "ref", scAt(time.Second)), "forced again")
	c2.Force = true
	scComplete(t, s, c2, true)
	scWantRecords(t, s, "ref", 2)
	got = scClaim(t, s, scReq("k", "fp", scAt(2*time.Second)), Completed)
	scWantResponse(t, got.Response, 201, "forced again")
}

func scRelease(t *testing.T, s Store) {
	ctx := context.Background()
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	if err := s.Release(ctx, "k", res.Token+1); err != nil {
		t.Fatalf("Release with a wrong token: %v", err)
	}
	if row := scLookup(t, s, "k"); row == nil || row.Token != res.Token {
		t.Fatalf("Release with a wrong token changed the key: %+v", row)
	}
	if err := s.Release(ctx, "k", res.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if row := scLookup(t, s, "k"); row != nil {
		t.Fatalf("key after Release = %+v, want nil", row)
	}
	again := scClaim(t, s, scReq("k", "fp2", scAt(time.Second)), Claimed)
	scComplete(t, s, scCompletion("k", res.Token, scAt(time.Second), nil, "stale"), false)
	scComplete(t, s, scCompletion("k", again.Token, scAt(time.Second), nil, "done"), true)
	if err := s.Release(ctx, "k", again.Token); err != nil {
		t.Fatalf("Release of a done key: %v", err)
	}
	if row := scLookup(t, s, "k"); row == nil || row.State != StateDone {
		t.Fatalf("Release deleted a done key: %+v", row)
	}
	if err := s.Release(ctx, "nokey", 1); err != nil {
		t.Fatalf("Release of an unknown key: %v", err)
	}
}

func scRecordsFiltered(t *testing.T, s Store) {
	ctx := context.Background()
	if recs := scRecords(t, s, "alice", "orders", "ref"); len(recs) != 0 {
		t.Fatalf("Records on an empty store = %+v", recs)
	}
	add := []Record{
		{ID: "a3", Tenant: "alice", Kind: "orders", Ref: "ref", Amount: 3, Currency: "EUR", Created: scAt(3 * time.Second)},
		{ID: "a1", Tenant: "alice", Kind: "orders", Ref: "ref", Amount: 1, Currency: "EUR", Created: scAt(time.Second)},
		{ID: "b1", Tenant: "bob", Kind: "orders", Ref: "ref", Amount: 1, Currency: "EUR", Created: scAt(time.Second)},
		{ID: "r1", Tenant: "alice", Kind: "refunds", Ref: "ref", Amount: 1, Currency: "EUR", Created: scAt(time.Second)},
		{ID: "o1", Tenant: "alice", Kind: "orders", Ref: "other", Amount: 1, Currency: "EUR", Created: scAt(time.Second)},
		{ID: "a2", Tenant: "alice", Kind: "orders", Ref: "ref", Amount: 2, Currency: "USD", Created: scAt(2 * time.Second)},
	}
	for _, r := range add {
		if err := s.AddRecord(ctx, r); err != nil {
			t.Fatalf("AddRecord(%s): %v", r.ID, err)
		}
	}
	recs := scWantRecords(t, s, "ref", 3)
	for i, id := range []string{"a1", "a2", "a3"} {
		if recs[i].ID != id || recs[i].Amount != int64(i+1) {
			t.Fatalf("Records[%d] = %+v, want %s (oldest first)", i, recs[i], id)
		}
	}
	if recs[1].Currency != "USD" || !recs[1].Created.Equal(scAt(2*time.Second)) {
		t.Fatalf("record fields not kept: %+v", recs[1])
	}
	for _, q := range [][3]string{{"bob", "orders", "ref"}, {"alice", "refunds", "ref"}, {"alice", "orders", "other"}} {
		if got := scRecords(t, s, q[0], q[1], q[2]); len(got) != 1 {
			t.Fatalf("Records(%v) = %+v, want 1", q, got)
		}
	}
}

func scPrune(t *testing.T, s Store) {
	ctx := context.Background()
	for i, scope := range []string{"k0", "k1", "k2"} {
		res := scClaim(t, s, scReq(scope, "fp", scAt(time.Duration(i)*time.Hour)), Claimed)
		if i == 0 {
			scComplete(t, s, scCompletion(scope, res.Token, scAt(0), scRecord("r0", "ref", scAt(0)), "x"), true)
		}
	}
	n, err := s.Prune(ctx, scAt(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 (strictly before the cut-off)", n, err)
	}
	if scLookup(t, s, "k0") != nil || scLookup(t, s, "k1") == nil || scLookup(t, s, "k2") == nil {
		t.Fatal("Prune removed the wrong keys")
	}
	scWantRecords(t, s, "ref", 1) // records are never pruned
	if n, err := s.Prune(ctx, scAt(10*time.Hour)); err != nil || n != 2 {
		t.Fatalf("second Prune = %d, %v; want 2", n, err)
	}
	scClaim(t, s, scReq("k0", "fp", scAt(10*time.Hour)), Claimed)
}

// scBurst releases n goroutines at once, each claiming req, and returns the outcomes.
func scBurst(t *testing.T, stores []Store, n int, req ClaimRequest) map[ClaimOutcome]int {
	t.Helper()
	return storekittest.Burst(t, n, func(i int) (ClaimOutcome, error) {
		res, err := stores[i%len(stores)].Claim(context.Background(), req)
		return res.Outcome, err
	})
}

// scRounds is how many bursts the concurrency cases run.
const scRounds = 10

// scBurstRounds checks that each of scRounds bursts of 16 claims has exactly one winner.
func scBurstRounds(t *testing.T, stores []Store) {
	t.Helper()
	for round := range scRounds {
		req := scReq(fmt.Sprintf("burst-%d", round), "fp", scAt(0))
		got := scBurst(t, stores, 16, req)
		if got[Claimed] != 1 || got[InFlight] != 15 {
			t.Fatalf("round %d: outcomes %v, want exactly 1 claimed and 15 in-flight", round, got)
		}
	}
}

func scConcurrentClaim(t *testing.T, s Store) {
	scBurstRounds(t, []Store{s})
}

func scConcurrentTakeover(t *testing.T, s Store) {
	for round := range scRounds {
		scope := fmt.Sprintf("takeover-%d", round)
		first := scClaim(t, s, scReq(scope, "fp", scAt(0)), Claimed)
		got := scBurst(t, []Store{s}, 16, scReq(scope, "fp", scAt(time.Minute)))
		if got[Claimed] != 1 || got[InFlight] != 15 {
			t.Fatalf("round %d: takeover outcomes %v, want exactly 1 claimed", round, got)
		}
		scComplete(t, s, scCompletion(scope, first.Token, scAt(time.Minute), nil, "stale"), false)
	}
}
