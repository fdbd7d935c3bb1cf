package selftest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference"
)

func TestWithSearchPath(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "postgres://postgres@127.0.0.1:5432/test?search_path=rs_x_1&sslmode=disable"},
		{"postgres://u@h/db", "postgres://u@h/db?search_path=rs_x_1"},
		{"host=127.0.0.1 dbname=test", "host=127.0.0.1 dbname=test search_path=rs_x_1"},
	} {
		if got := withSearchPath(c.dsn, "rs_x_1"); got != c.want {
			t.Errorf("withSearchPath(%q) = %q, want %q", c.dsn, got, c.want)
		}
	}
}

// testServices are the services of a self-test of this test's own (the machine's PostgreSQL
// and Redis).
func testServices(t *testing.T) *services {
	t.Helper()
	pg, _ := reference.DefaultDSN("postgres")
	rd, _ := reference.DefaultDSN("redis")
	return &services{runID: newRunID(), postgresDSN: pg, redisURL: rd}
}

// Each cell's store lives in a schema or under a prefix of its own, gone when it is released;
// what an interrupted cell left is swept at the end.
func TestSpacesKeepCellsApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sv := testServices(t)
	used := map[string]bool{"postgres": true, "redis": true}
	defer sv.sweep(used)
	for _, kind := range []string{"postgres", "redis"} {
		a, err := sv.open(ctx, 1, kind)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		b, err := sv.open(ctx, 2, kind)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		sa, err := reference.OpenStore(ctx, kind, a.dsn)
		if err != nil {
			t.Fatalf("%s: open cell 1's store: %v", kind, err)
		}
		sb, err := reference.OpenStore(ctx, kind, b.dsn)
		if err != nil {
			t.Fatalf("%s: open cell 2's store: %v", kind, err)
		}
		now := time.Now()
		req := reference.ClaimRequest{Scope: "alice/orders/k1", Fingerprint: "f", Now: now, Retention: time.Hour, LockTimeout: time.Minute}
		if res, err := sa.Claim(ctx, req); err != nil || res.Outcome != reference.Claimed {
			t.Fatalf("%s: cell 1 claims: %+v, %v", kind, res, err)
		}
		// The same key in the other cell is new there: the cells share nothing.
		if res, err := sb.Claim(ctx, req); err != nil || res.Outcome != reference.Claimed {
			t.Fatalf("%s: cell 2 claims the key cell 1 holds: %+v, %v; want its own claim", kind, res, err)
		}
		// A pruner deletes only its own cell's keys.
		if _, err := sb.Prune(ctx, now.Add(time.Hour)); err != nil {
			t.Fatalf("%s: prune cell 2: %v", kind, err)
		}
		if res, err := sa.Claim(ctx, req); err != nil || res.Outcome != reference.InFlight {
			t.Fatalf("%s: after cell 2's pruner ran, cell 1's claim is %+v, %v; want still in flight", kind, res, err)
		}
		// And cell 2 holds a key when it ends.
		if _, err := sb.Claim(ctx, req); err != nil {
			t.Fatalf("%s: cell 2 claims again: %v", kind, err)
		}
		sa.Close()
		sb.Close()
		if err := a.release(); err != nil {
			t.Fatalf("%s: release: %v", kind, err)
		}
		// Cell 2 is left as an interrupted cell would leave it.
	}
	schemas, err := sv.schemas(ctx)
	if err != nil || !slices.Equal(schemas, []string{sv.schema(2)}) {
		t.Fatalf("schemas left %v (%v), want only cell 2's %s", schemas, err, sv.schema(2))
	}
	if keys, err := sv.keys(ctx, sv.redisPrefix(1)); err != nil || len(keys) != 0 {
		t.Fatalf("cell 1's Redis keys left after its release: %v (%v)", keys, err)
	}
	if keys, err := sv.keys(ctx, sv.redisPrefix(2)); err != nil || len(keys) == 0 {
		t.Fatalf("cell 2's Redis keys: %v (%v), want some", keys, err)
	}
	left, err := sv.sweep(used)
	if err != nil || !left.Empty() {
		t.Fatalf("after the sweep: left %s (%v), want nothing", left, err)
	}
}
