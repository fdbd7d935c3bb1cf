package consumer

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit/storekittest"
)

// scBase is the contract's fixed clock; it has a sub-millisecond part because stores keep
// microseconds and boundaries must be exact.
var scBase = time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC)

func scAt(d time.Duration) time.Time { return scBase.Add(d) }

// scReq claims key at now with a 1-hour retention and a 30-second lock.
func scReq(key string, now time.Time) ClaimRequest {
	return ClaimRequest{Key: key, Now: now, Retention: time.Hour, LockTimeout: 30 * time.Second}
}

func scClaim(t *testing.T, s Store, req ClaimRequest, want ClaimOutcome) ClaimResult {
	t.Helper()
	res, err := s.Claim(context.Background(), req)
	if err != nil {
		t.Fatalf("Claim(%q): %v", req.Key, err)
	}
	if res.Outcome != want || want == Claimed && res.Token == 0 {
		t.Fatalf("Claim(%q, now %v) = %v token %d, want %v", req.Key, req.Now, res.Outcome, res.Token, want)
	}
	return res
}

// scDone completes key with an effect of event key on object at version.
func scDone(t *testing.T, s Store, c Completion, want bool) {
	t.Helper()
	ok, err := s.Complete(context.Background(), c)
	if err != nil || ok != want {
		t.Fatalf("Complete(%q, token %d) = %v, %v; want %v", c.Key, c.Token, ok, err, want)
	}
}

func scCompletion(key string, token int64, object string, version int64, now time.Time) Completion {
	return Completion{Key: key, Token: token, Now: now, Retention: time.Hour,
		Effect: Effect{Event: key, Object: object, Version: version, Created: now}}
}

func scEffects(t *testing.T, s Store, f EffectFilter) []Effect {
	t.Helper()
	list, err := s.Effects(context.Background(), f)
	if err != nil {
		t.Fatalf("Effects(%+v): %v", f, err)
	}
	return list
}

func scWantEffects(t *testing.T, s Store, f EffectFilter, want int) []Effect {
	t.Helper()
	list := scEffects(t, s, f)
	if len(list) != want {
		t.Fatalf("Effects(%+v) = %d effects, want %d: %+v", f, len(list), want, list)
	}
	return list
}

func scWantVersion(t *testing.T, s Store, object string, want int64) {
	t.Helper()
	got, err := s.ObjectVersion(context.Background(), object)
	if err != nil || got != want {
		t.Fatalf("ObjectVersion(%q) = %d, %v; want %d", object, got, err, want)
	}
}

func scLookup(t *testing.T, s Store, key string) *EventRow {
	t.Helper()
	row, err := s.Lookup(context.Background(), key)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", key, err)
	}
	return row
}

// storeContracts is what every Store must do.
var storeContracts = []struct {
	name string
	run  func(t *testing.T, s Store)
}{
	{"NewClaim", scNewClaim},
	{"InFlight", scInFlight},
	{"Done", scDoneIsDuplicate},
	{"TakeoverAfterLockTimeout", scTakeover},
	{"Fencing", scFencing},
	{"Monotonic", scMonotonic},
	{"Retention", scRetention},
	{"Prune", scPrune},
	{"ForceAndNoKey", scForce},
	{"EffectsFiltered", scEffectsFiltered},
	{"ConcurrentClaim", func(t *testing.T, s Store) { scBurstRounds(t, []Store{s}) }},
}

// TestStoreContract runs every contract case on every store, each on a fresh backend.
func TestStoreContract(t *testing.T) {
	for _, store := range AllStores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			for _, c := range storeContracts {
				t.Run(c.name, func(t *testing.T) { c.run(t, newBackend(t, store).open(t)) })
			}
		})
	}
}

func scNewClaim(t *testing.T, s Store) {
	if row := scLookup(t, s, "evt_1"); row != nil {
		t.Fatalf("Lookup of an unknown event = %+v, want nil", row)
	}
	res := scClaim(t, s, scReq("evt_1", scAt(0)), Claimed)
	row := scLookup(t, s, "evt_1")
	if row == nil || row.State != EventInProgress || row.Token != res.Token ||
		!row.CreatedAt.Equal(scAt(0)) || !row.LockedAt.Equal(scAt(0)) {
		t.Fatalf("row after claim = %+v, want in progress at %v with token %d", row, scAt(0), res.Token)
	}
	scClaim(t, s, scReq("evt_2", scAt(0)), Claimed) // events are independent
}

func scInFlight(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("evt_1", scAt(0)), Claimed)
	scClaim(t, s, scReq("evt_1", scAt(time.Second)), ClaimInFlight)
	scClaim(t, s, scReq("evt_1", scAt(30*time.Second-time.Microsecond)), ClaimInFlight)
	if row := scLookup(t, s, "evt_1"); row.Token != res.Token || row.State != EventInProgress {
		t.Fatalf("in-flight claims changed the row: %+v", row)
	}
}

func scDoneIsDuplicate(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("evt_1", scAt(0)), Claimed)
	scDone(t, s, scCompletion("evt_1", res.Token, "obj_1", 1, scAt(time.Second)), true)
	for i := range 3 {
		scClaim(t, s, scReq("evt_1", scAt(time.Duration(i+2)*time.Minute)), ClaimDone)
	}
	scWantEffects(t, s, EffectFilter{Event: "evt_1"}, 1)
	scWantVersion(t, s, "obj_1", 1)
}

func scTakeover(t *testing.T, s Store) {
	first := scClaim(t, s, scReq("evt_1", scAt(0)), Claimed)
	second := scClaim(t, s, scReq("evt_1", scAt(30*time.Second)), Claimed)
	if second.Token <= first.Token {
		t.Fatalf("takeover token %d, want > %d", second.Token, first.Token)
	}
	// The stale first delivery wakes up: fenced, no effect, the row untouched.
	scDone(t, s, scCompletion("evt_1", first.Token, "obj_1", 1, scAt(40*time.Second)), false)
	scWantEffects(t, s, EffectFilter{Event: "evt_1"}, 0)
	scWantVersion(t, s, "obj_1", 0)
	if row := scLookup(t, s, "evt_1"); row.State != EventInProgress || row.Token != second.Token {
		t.Fatalf("fenced completion changed the row: %+v", row)
	}
	scDone(t, s, scCompletion("evt_1", second.Token, "obj_1", 1, scAt(41*time.Second)), true)
	scWantEffects(t, s, EffectFilter{Event: "evt_1"}, 1)
	scClaim(t, s, scReq("evt_1", scAt(2*time.Minute)), ClaimDone)
}

func scFencing(t *testing.T, s Store) {
	ctx := context.Background()
	res := scClaim(t, s, scReq("evt_1", scAt(0)), Claimed)
	if ok, err := s.MarkDone(ctx, "evt_1", res.Token+1); ok || err != nil {
		t.Fatalf("MarkDone with a wrong token = %v, %v; want false", ok, err)
	}
	if err := s.Release(ctx, "evt_1", res.Token+1); err != nil {
		t.Fatal(err)
	}
	if row := scLookup(t, s, "evt_1"); row == nil || row.Token != res.Token {
		t.Fatalf("Release with a wrong token changed the row: %+v", row)
	}
	if err := s.Release(ctx, "evt_1", res.Token); err != nil {
		t.Fatal(err)
	}
	if row := scLookup(t, s, "evt_1"); row != nil {
		t.Fatalf("row after Release = %+v, want none", row)
	}
	scDone(t, s, scCompletion("evt_1", res.Token, "obj_1", 1, scAt(time.Second)), false)
	again := scClaim(t, s, scReq("evt_1", scAt(time.Second)), Claimed)
	if again.Token == res.Token {
		t.Fatalf("a released event was claimed again with the old token %d", res.Token)
	}
	if ok, err := s.MarkDone(ctx, "evt_1", again.Token); !ok || err != nil {
		t.Fatalf("MarkDone = %v, %v; want true", ok, err)
	}
	scDone(t, s, scCompletion("evt_1", again.Token, "obj_1", 1, scAt(time.Second)), false) // done already
	if err := s.Release(ctx, "evt_1", again.Token); err != nil {
		t.Fatal(err)
	}
	scClaim(t, s, scReq("evt_1", scAt(2*time.Second)), ClaimDone) // Release keeps done rows
	scWantEffects(t, s, EffectFilter{Event: "evt_1"}, 0)
}

func scMonotonic(t *testing.T, s Store) {
	scWantVersion(t, s, "obj_1", 0)
	for i, v := range []int64{3, 1, 2, 3} {
		key := fmt.Sprintf("evt_%d", i)
		res := scClaim(t, s, scReq(key, scAt(0)), Claimed)
		scDone(t, s, scCompletion(key, res.Token, "obj_1", v, scAt(time.Second)), true)
		scWantVersion(t, s, "obj_1", 3)
	}
	scWantEffects(t, s, EffectFilter{Object: "obj_1"}, 4) // every effect counts, whatever its order
	c := scCompletion("evt_blind", 0, "obj_1", 1, scAt(time.Second))
	c.Key, c.OrderBlind = "", true
	scDone(t, s, c, true)
	scWantVersion(t, s, "obj_1", 1)
	big := scCompletion("", 0, "obj_big", 1<<62+1, scAt(0)) // beyond float precision
	scDone(t, s, big, true)
	big.Effect.Version = 1 << 62
	scDone(t, s, big, true)
	scWantVersion(t, s, "obj_big", 1<<62+1)
}

func scRetention(t *testing.T, s Store) {
	first := scClaim(t, s, scReq("evt_1", scAt(0)), Claimed)
	scDone(t, s, scCompletion("evt_1", first.Token, "obj_1", 1, scAt(time.Second)), true)
	scClaim(t, s, scReq("evt_1", scAt(time.Hour-time.Microsecond)), ClaimDone)
	second := scClaim(t, s, scReq("evt_1", scAt(time.Hour)), Claimed) // forgotten: a new event
	if second.Token <= first.Token {
		t.Fatalf("reset token %d, want > %d", second.Token, first.Token)
	}
	forever := ClaimRequest{Key: "evt_2", Now: scAt(0)}
	scClaim(t, s, forever, Claimed)
	forever.Now = scAt(10000 * time.Hour)
	scClaim(t, s, forever, ClaimInFlight) // no retention, no lock timeout
}

func scPrune(t *testing.T, s Store) {
	ctx := context.Background()
	for i, key := range []string{"k0", "k1", "k2"} {
		res := scClaim(t, s, scReq(key, scAt(time.Duration(i)*time.Hour)), Claimed)
		if i == 0 {
			scDone(t, s, scCompletion(key, res.Token, "obj_1", 1, scAt(0)), true)
		}
	}
	if n, err := s.Prune(ctx, scAt(time.Hour)); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 (strictly before the cut-off)", n, err)
	}
	if scLookup(t, s, "k0") != nil || scLookup(t, s, "k1") == nil || scLookup(t, s, "k2") == nil {
		t.Fatal("Prune removed the wrong records")
	}
	scWantEffects(t, s, EffectFilter{Event: "k0"}, 1) // effects are never pruned
	if n, err := s.Prune(ctx, scAt(10*time.Hour)); err != nil || n != 2 {
		t.Fatalf("second Prune = %d, %v; want 2", n, err)
	}
	scClaim(t, s, scReq("k0", scAt(10*time.Hour)), Claimed)
}

func scForce(t *testing.T, s Store) {
	c := scCompletion("evt_1", 0, "obj_1", 1, scAt(0))
	c.Force = true
	scDone(t, s, c, true)
	if row := scLookup(t, s, "evt_1"); row == nil || row.State != EventDone {
		t.Fatalf("row after a forced completion = %+v, want done", row)
	}
	scDone(t, s, c, true) // no check: the check-then-insert bug
	scWantEffects(t, s, EffectFilter{Event: "evt_1"}, 2)
	scClaim(t, s, scReq("evt_1", scAt(time.Second)), ClaimDone)
	none := scCompletion("", 0, "obj_2", 1, scAt(0))
	none.Effect.Event = "evt_2"
	scDone(t, s, none, true)
	scDone(t, s, none, true)
	scWantEffects(t, s, EffectFilter{Event: "evt_2"}, 2)
	if row := scLookup(t, s, "evt_2"); row != nil {
		t.Fatalf("a completion without a key wrote a record: %+v", row)
	}
}

func scEffectsFiltered(t *testing.T, s Store) {
	for i, e := range []Effect{{"e1", "o1", 1, scAt(0), "p1"}, {"e2", "o1", 2, scAt(0), "p2"}, {"e1", "o2", 3, scAt(0), "p1"}, {"e3", "o2", 4, scAt(0), "p1"}} {
		c := Completion{Now: scAt(time.Duration(i)), Effect: e}
		scDone(t, s, c, true)
	}
	versions := func(list []Effect) []int64 {
		var out []int64
		for _, e := range list {
			out = append(out, e.Version)
		}
		return out
	}
	for _, c := range []struct {
		f    EffectFilter
		want []int64
	}{
		{EffectFilter{Event: "e1"}, []int64{1, 3}},
		{EffectFilter{Object: "o1"}, []int64{1, 2}},
		{EffectFilter{Event: "e1", Object: "o2"}, []int64{3}},
		{EffectFilter{}, []int64{1, 2, 3, 4}},
		{EffectFilter{Event: "nope"}, nil},
		{EffectFilter{Operation: "p1"}, []int64{1, 3, 4}},
		{EffectFilter{Operation: "p1", Event: "e3"}, []int64{4}},
		{EffectFilter{Operation: "p2", Object: "o2"}, nil},
	} {
		if got := versions(scEffects(t, s, c.f)); !slices.Equal(got, c.want) {
			t.Errorf("Effects(%+v) versions = %v, want %v (in write order)", c.f, got, c.want)
		}
	}
	if got := scEffects(t, s, EffectFilter{Event: "e2"}); len(got) != 1 || got[0] != (Effect{"e2", "o1", 2, scAt(0), "p2"}) {
		t.Errorf("Effects(e2) = %+v, want the effect as written", got)
	}
}

// scBurst releases n goroutines at once, each claiming req on stores[i%len], and counts
// the outcomes.
func scBurst(t *testing.T, stores []Store, n int, req ClaimRequest) map[ClaimOutcome]int {
	t.Helper()
	return storekittest.Burst(t, n, func(i int) (ClaimOutcome, error) {
		res, err := stores[i%len(stores)].Claim(context.Background(), req)
		return res.Outcome, err
	})
}

// scBurstRounds checks that each of 10 bursts of 16 claims, fresh and after the lock
// timeout, has exactly one winner.
func scBurstRounds(t *testing.T, stores []Store) {
	t.Helper()
	for round := range 10 {
		key := fmt.Sprintf("burst-%d", round)
		for _, now := range []time.Time{scAt(0), scAt(time.Minute)} {
			if got := scBurst(t, stores, 16, scReq(key, now)); got[Claimed] != 1 || got[ClaimInFlight] != 15 {
				t.Fatalf("round %d at %v: outcomes %v, want exactly 1 claimed and 15 in flight", round, now, got)
			}
		}
	}
}

// TestSharedBackend: several Store values on one SQLite file, PostgreSQL schema or Redis
// prefix behave as one store.
func TestSharedBackend(t *testing.T) {
	forEachStore(t, durableStores, func(t *testing.T, b backend) {
		a, c := b.open(t), b.open(t)
		scBurstRounds(t, []Store{a, c})
		res := scClaim(t, a, scReq("evt_1", scAt(0)), Claimed)
		scClaim(t, c, scReq("evt_1", scAt(time.Second)), ClaimInFlight)
		scDone(t, c, scCompletion("evt_1", res.Token, "obj_1", 7, scAt(time.Second)), true)
		scClaim(t, a, scReq("evt_1", scAt(2*time.Second)), ClaimDone)
		scWantEffects(t, a, EffectFilter{Event: "evt_1"}, 1)
		scWantVersion(t, a, "obj_1", 7)
	})
}
