package reference

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit/storekittest"
)

// newPGSchema creates a fresh schema rs_test_<random>, drops it when the test ends, and
// returns a DSN whose search_path selects it. An unreachable PostgreSQL fails the test.
func newPGSchema(t *testing.T) string {
	t.Helper()
	return storekittest.PostgresSchema(t, "rs_test_")
}

func openTestPostgres(t *testing.T, dsn string) *SQLStore {
	t.Helper()
	s, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openTestSQLite(t *testing.T, path string) *SQLStore {
	t.Helper()
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatalf("OpenSQLite(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSQLiteStoreContract(t *testing.T) {
	runStoreContract(t, func(t *testing.T) Store {
		return openTestSQLite(t, filepath.Join(t.TempDir(), "rs.db"))
	})
}

func TestPostgresStoreContract(t *testing.T) {
	runStoreContract(t, func(t *testing.T) Store {
		return openTestPostgres(t, newPGSchema(t))
	})
}

// TestSQLiteTwoHandlesConcurrentClaims plays two processes on one SQLite file.
func TestSQLiteTwoHandlesConcurrentClaims(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rs.db")
	a, b := openTestSQLite(t, path), openTestSQLite(t, path)
	scBurstRounds(t, []Store{a, b})
	writeBurst(t, []Store{a, b}, 16)
}

// writeBurst has n goroutines each claim and complete their own key with a record, all at
// once across the stores: no write may fail with SQLITE_BUSY or anything else.
func writeBurst(t *testing.T, stores []Store, n int) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			s, scope := stores[i%len(stores)], fmt.Sprintf("write-%d", i)
			res, err := s.Claim(context.Background(), scReq(scope, "fp", scAt(0)))
			if err == nil {
				rec := scRecord(fmt.Sprintf("w%d", i), "writes", scAt(time.Duration(i)*time.Millisecond))
				_, err = s.Complete(context.Background(), scCompletion(scope, res.Token, scAt(0), rec, "ok"))
			}
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent write failed: %v", err)
		}
	}
	scWantRecords(t, stores[0], "writes", n)
}

// TestSQLiteConcurrentOpen migrates one fresh file from several handles at once.
func TestSQLiteConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rs.db")
	stores := openConcurrently(t, 4, func(ctx context.Context) (*SQLStore, error) { return OpenSQLite(ctx, path) })
	wantVersions(t, stores[0])
	scBurstRounds(t, []Store{stores[0], stores[1], stores[2], stores[3]})
}

// TestPostgresConcurrentMigrate migrates one fresh schema from several stores at once.
func TestPostgresConcurrentMigrate(t *testing.T) {
	dsn := newPGSchema(t)
	stores := openConcurrently(t, 4, func(ctx context.Context) (*SQLStore, error) { return OpenPostgres(ctx, dsn) })
	wantVersions(t, stores[0])
	scBurstRounds(t, []Store{stores[0], stores[1], stores[2], stores[3]})
}

// openConcurrently opens n stores at the same instant; every open must succeed.
func openConcurrently(t *testing.T, n int, open func(context.Context) (*SQLStore, error)) []*SQLStore {
	t.Helper()
	stores := make([]*SQLStore, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = open(context.Background())
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	return stores
}

// wantVersions checks that every migration is recorded exactly once.
func wantVersions(t *testing.T, s *SQLStore) {
	t.Helper()
	storekittest.WantVersions(t, s.db.DB, schema)
}

func TestSQLiteV1DataSurvives(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rs.db")
	testV1DataSurvives(t, storekit.SQLite, storekit.SQLiteDSN(path), func() (*SQLStore, error) {
		return OpenSQLite(context.Background(), path)
	})
}

func TestPostgresV1DataSurvives(t *testing.T) {
	dsn := newPGSchema(t)
	testV1DataSurvives(t, storekit.Postgres, dsn, func() (*SQLStore, error) {
		return OpenPostgres(context.Background(), dsn)
	})
}

// testV1DataSurvives writes rows under schema v1 only, then opens the store normally (which
// migrates to the latest version) and checks that the old rows still work.
func testV1DataSurvives(t *testing.T, d *storekit.Dialect, dsn string, open func() (*SQLStore, error)) {
	ctx := context.Background()
	old, err := storekit.Open(ctx, d, dsn, schema, 1)
	if err != nil {
		t.Fatalf("open at schema v1: %v", err)
	}
	v1 := []string{
		`INSERT INTO rs_keys (scope, fingerprint, state, token, created_at, locked_at, status, body)
			VALUES ('done', 'fp', 'done', 7, ?, ?, 201, ?)`,
		`INSERT INTO rs_keys (scope, fingerprint, state, token, created_at, locked_at)
			VALUES ('busy', 'fp', 'in_progress', 3, ?, ?)`,
		`INSERT INTO rs_records (id, tenant, kind, ref, amount, currency, created_at)
			VALUES ('old2', 'alice', 'orders', 'ref', 2, 'EUR', ?)`,
		`INSERT INTO rs_records (id, tenant, kind, ref, amount, currency, created_at)
			VALUES ('old1', 'alice', 'orders', 'ref', 1, 'EUR', ?)`,
	}
	micros := func(d time.Duration) int64 { return scAt(d).UnixMicro() }
	args := [][]any{{micros(0), micros(0), []byte("v1 body")}, {micros(0), micros(0)}, {micros(2 * time.Second)}, {micros(time.Second)}}
	for i, q := range v1 {
		if _, err := old.ExecContext(ctx, d.Rebind(q), args[i]...); err != nil {
			t.Fatalf("v1 insert %d: %v", i, err)
		}
	}
	old.Close()

	s, err := open()
	if err != nil {
		t.Fatalf("open and migrate to v%d: %v", schema.Latest(), err)
	}
	t.Cleanup(func() { s.Close() })
	wantVersions(t, s)
	got := scClaim(t, s, scReq("done", "fp", scAt(time.Minute)), Completed)
	scWantResponse(t, got.Response, 201, "v1 body")
	scClaim(t, s, scReq("busy", "fp", scAt(time.Second)), InFlight)
	taken := scClaim(t, s, scReq("busy", "fp", scAt(time.Minute)), Claimed)
	if taken.Token != 4 {
		t.Fatalf("takeover of a v1 row got token %d, want 4", taken.Token)
	}
	scComplete(t, s, scCompletion("busy", taken.Token, scAt(time.Minute), scRecord("new", "ref", scAt(time.Minute)), "new"), true)
	recs := scWantRecords(t, s, "ref", 3)
	for i, id := range []string{"old1", "old2", "new"} {
		if recs[i].ID != id {
			t.Fatalf("records after migration = %+v, want %s at %d", recs, id, i)
		}
	}
}

func TestSQLOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "missing", "dir", "rs.db")); err == nil {
		t.Error("OpenSQLite in a missing directory succeeded")
	}
	if _, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "a?b.db")); err == nil {
		t.Error("OpenSQLite accepted a path with '?'")
	}
	if _, err := OpenPostgres(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2"); err == nil {
		t.Error("OpenPostgres on a closed port succeeded")
	}
}
