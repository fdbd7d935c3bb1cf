package framework

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestLoadPlanIsPureAndStrided(t *testing.T) {
	p := LoadPlan{Seed: 42, Shards: 4, Rate: 50, Retry: 0.3, Twins: 0.2, Ops: 2, Tenants: 2, Instances: 2,
		Base: ShardSeqBase * 4, MaxAge: time.Hour}
	// Another shard computes the same plan on its own, in another order (a shard asks only for
	// its own hits and its twins): every hit must come out the same.
	q := p
	backwards := make([]PlannedHit, 4000)
	for h := int64(len(backwards)) - 1; h >= 0; h-- {
		backwards[h] = q.Hit(h)
	}
	kinds := map[int]int{}
	twins, crossRetries := 0, 0
	for h := range int64(4000) {
		a, b := p.Hit(h), backwards[h]
		if a != b {
			t.Fatalf("hit %d: %+v, and %+v when computed in reverse order: the plan is not a pure function", h, a, b)
		}
		kinds[a.Kind]++
		if a.Owner != int(h%4) || a.Round != h/4 {
			t.Fatalf("hit %d: owner %d round %d, want %d and %d", h, a.Owner, a.Round, h%4, h/4)
		}
		switch a.Kind {
		case HitRetry:
			if a.RetryOf < 0 || a.RetryOf >= h || p.Hit(a.RetryOf).Kind == HitRetry || p.Hit(a.RetryOf).Seq != a.Seq {
				t.Fatalf("hit %d repeats hit %d badly: %+v", h, a.RetryOf, a)
			}
			if a.RepeatsFrom != a.Owner {
				crossRetries++
			}
		default:
			if a.Seq%4 != int64(a.Owner) {
				t.Fatalf("hit %d of shard %d has sequence number %d, not ≡ its shard mod 4", h, a.Owner, a.Seq)
			}
			if a.Twin {
				twins++
			}
		}
	}
	if kinds[HitFresh] == 0 || kinds[HitPair] == 0 || kinds[HitRetry] == 0 || twins == 0 || crossRetries == 0 {
		t.Fatalf("kinds %v, %d twins, %d cross-shard retries: every kind must occur", kinds, twins, crossRetries)
	}
	// Shard (owner+1) mod N sends the twin in the same round.
	sent := 0
	for k := range int64(1000) {
		for i := range 4 {
			own, twin := p.ShardHits(i, k)
			if own.Owner != i || own.Round != k {
				t.Fatalf("shard %d round %d got hit %+v", i, k, own)
			}
			if twin != nil {
				sent++
				if twin.Owner != (i+3)%4 || twin.Round != k || !twin.Twin {
					t.Fatalf("shard %d round %d sends a twin of %+v", i, k, twin)
				}
			}
		}
	}
	if sent != twins {
		t.Fatalf("%d twins planned, %d sent", twins, sent)
	}
	one := p
	one.Shards = 1
	for h := range int64(1000) {
		if one.Hit(h).Twin {
			t.Fatal("a plan of one shard has a cross-shard twin")
		}
	}
}

func TestLoadPlanRetriesOnlyYoungOperations(t *testing.T) {
	p := LoadPlan{Seed: 7, Shards: 1, Rate: 100, Retry: 1, Ops: 1, Instances: 1, MaxAge: 50 * time.Millisecond}
	for h := range int64(2000) {
		if a := p.Hit(h); a.Kind == HitRetry && p.Due(h)-p.Due(a.RetryOf) >= p.MaxAge {
			t.Fatalf("hit %d retries hit %d, %v older than the max age", h, a.RetryOf, p.Due(h)-p.Due(a.RetryOf))
		}
	}
}

// A plan's pacer sends the hits a stalled process owes at once and stops when all went out,
// however long the attack took (vegeta's own stops at the duration and drops them).
func TestPlanPacerSendsEveryPlannedHit(t *testing.T) {
	p := planPacer{ConstantPacer: vegeta.ConstantPacer{Freq: 10, Per: time.Second}, hits: 20}
	tests := []struct {
		name     string
		elapsed  time.Duration
		hits     uint64
		wantWait bool // a wait before the next hit
		wantStop bool
	}{
		{"on time: wait for the next", 500 * time.Millisecond, 5, true, false},
		{"behind after a stall: at once", 1900 * time.Millisecond, 8, false, false},
		{"past the planned duration, hits owed: at once", 5 * time.Second, 12, false, false},
		{"every hit sent: stop", 5 * time.Second, 20, false, true},
	}
	for _, tt := range tests {
		wait, stop := p.Pace(tt.elapsed, tt.hits)
		if (wait > 0) != tt.wantWait || stop != tt.wantStop {
			t.Errorf("%s: Pace(%v, %d) = %v, %v; want a wait %v, stop %v", tt.name, tt.elapsed, tt.hits, wait, stop, tt.wantWait, tt.wantStop)
		}
	}
}
