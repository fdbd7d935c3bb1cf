package storekit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit/storekittest"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct {
		d         *storekit.Dialect
		got, want string
	}{
		{storekit.Postgres, `SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{storekit.SQLite, `x = ?`, `x = ?`},
	} {
		if got := c.d.Rebind(c.got); got != c.want {
			t.Errorf("%s: Rebind(%q) = %q, want %q", c.d.Name, c.got, got, c.want)
		}
	}
}

func TestTimeEncoding(t *testing.T) {
	times := []time.Time{
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC),
		time.Date(2030, 1, 2, 3, 4, 5, 123457000, time.UTC),
		time.Date(2030, 1, 2, 3, 4, 6, 0, time.UTC),
	}
	for i, tm := range times {
		enc := storekit.EncodeTime(tm)
		got, err := storekit.DecodeTime(enc)
		if err != nil || !got.Equal(tm) {
			t.Errorf("DecodeTime(EncodeTime(%v)) = %v, %v", tm, got, err)
		}
		if i > 0 && storekit.EncodeTime(times[i-1]) >= enc {
			t.Errorf("EncodeTime(%v) does not sort before EncodeTime(%v)", times[i-1], tm)
		}
	}
	for _, bad := range []string{"", "123", strings.Repeat("x", 22)} {
		if _, err := storekit.DecodeTime(bad); err == nil {
			t.Errorf("DecodeTime(%q) succeeded", bad)
		}
	}
}

func TestCutoffAndTTL(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if got, want := storekit.Cutoff(now, time.Hour), storekit.EncodeTime(now.Add(-time.Hour)); got != want {
		t.Errorf("Cutoff(now, 1h) = %q, want %q", got, want)
	}
	for _, d := range []time.Duration{0, -time.Hour} {
		if got := storekit.Cutoff(now, d); got != "" {
			t.Errorf("Cutoff(now, %v) = %q, want none", d, got)
		}
	}
	for _, c := range []struct {
		retention time.Duration
		want      int64
	}{{0, 0}, {-time.Hour, 0}, {time.Second, time.Minute.Milliseconds()}, {time.Hour, 2 * time.Hour.Milliseconds()}} {
		if got := storekit.TTLMillis(c.retention); got != c.want {
			t.Errorf("TTLMillis(%v) = %d, want %d", c.retention, got, c.want)
		}
	}
}

func TestDefaultDSN(t *testing.T) {
	t.Setenv(storekit.EnvPostgresDSN, "")
	t.Setenv(storekit.EnvRedisURL, "redis://elsewhere:1/2")
	for store, want := range map[string]string{
		"postgres": storekit.DefaultPostgresDSN,
		"redis":    "redis://elsewhere:1/2",
		"memory":   "",
		"mysql":    "",
	} {
		if got, err := storekit.DefaultDSN(store, "x-", "f.db"); err != nil || got != want {
			t.Errorf("DefaultDSN(%s) = %q, %v; want %q", store, got, err, want)
		}
	}
	got, err := storekit.DefaultDSN("sqlite", "storekit-test-", "f.db")
	if err != nil || filepath.Base(got) != "f.db" || !strings.HasPrefix(filepath.Base(filepath.Dir(got)), "storekit-test-") {
		t.Fatalf("DefaultDSN(sqlite) = %q, %v; want f.db in a new storekit-test-* directory", got, err)
	}
	t.Cleanup(func() { removeAll(t, filepath.Dir(got)) })
}

// testSchema has two versions of one table, kt_items, recorded in kt_version.
var testSchema = storekit.Schema{
	VersionTable: "kt_version",
	LockKey:      "retrysafe.storekit-test's.migrate.", // a quote, to check the lock's literal
	Migrations: []storekit.Migration{
		{Version: 1, Name: "items",
			SQLite:   []string{`CREATE TABLE kt_items (id TEXT PRIMARY KEY)`},
			Postgres: []string{`CREATE TABLE kt_items (id TEXT PRIMARY KEY)`}},
		{Version: 2, Name: "item size",
			SQLite:   []string{`ALTER TABLE kt_items ADD COLUMN size INTEGER NOT NULL DEFAULT 0`},
			Postgres: []string{`ALTER TABLE kt_items ADD COLUMN size BIGINT NOT NULL DEFAULT 0`}},
	},
}

// TestMigrate opens a fresh database at v1, writes a row, opens it again (to the latest
// version) twice, and checks each version is recorded once and the row survives.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		d   *storekit.Dialect
		dsn func(t *testing.T) string
	}{
		{storekit.SQLite, func(t *testing.T) string { return storekit.SQLiteDSN(filepath.Join(t.TempDir(), "kt.db")) }},
		{storekit.Postgres, func(t *testing.T) string { return storekittest.PostgresSchema(t, "kt_test_") }},
	} {
		t.Run(c.d.Name, func(t *testing.T) {
			dsn := c.dsn(t)
			v1, err := storekit.Open(ctx, c.d, dsn, testSchema, 1)
			if err != nil {
				t.Fatalf("open at v1: %v", err)
			}
			if _, err := v1.ExecTx(ctx, `INSERT INTO kt_items (id) VALUES (?)`, "old"); err != nil {
				t.Fatalf("insert at v1: %v", err)
			}
			v1.Close()
			for range 2 {
				db, err := storekit.Open(ctx, c.d, dsn, testSchema, testSchema.Latest())
				if err != nil {
					t.Fatalf("open at v%d: %v", testSchema.Latest(), err)
				}
				defer db.Close()
				storekittest.WantVersions(t, db.DB, testSchema)
				var size int
				if err := db.QueryRowContext(ctx, db.Rebind(`SELECT size FROM kt_items WHERE id = ?`), "old").Scan(&size); err != nil || size != 0 {
					t.Errorf("the v1 row after migrating: size %d, %v", size, err)
				}
			}
		})
	}
}

func TestOpenSQLiteRejectsQuery(t *testing.T) {
	if _, err := storekit.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "a?b.db"), testSchema); err == nil {
		t.Error("OpenSQLite accepted a path with '?'")
	}
}

// TestRedisPrefixIsLiteral: pruning and purging a prefix with SCAN's glob characters touch
// only the keys under that prefix.
func TestRedisPrefixIsLiteral(t *testing.T) {
	ctx := context.Background()
	base := storekittest.RedisPrefix(t, "retrysafe-storekit-test:")
	rdb, err := storekit.OpenRedis(ctx, storekit.RedisURL())
	if err != nil {
		t.Fatalf("Redis at %s (set %s to use another): %v", storekit.RedisURL(), storekit.EnvRedisURL, err)
	}
	defer rdb.Close()
	old, cut := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, k := range []string{base + "a*:1", base + "a*:2", base + "ab:1", base + "b:1"} {
		if err := rdb.HSet(ctx, k, "created", storekit.EncodeTime(old)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := storekit.PruneCreatedBefore(ctx, rdb, base+"a*:", cut)
	if err != nil || n != 2 {
		t.Fatalf("PruneCreatedBefore(a*:) = %d, %v; want 2", n, err)
	}
	if err := storekit.Purge(ctx, rdb, base+"a"); err != nil {
		t.Fatal(err)
	}
	left, err := rdb.Keys(ctx, base+"*").Result()
	if err != nil || len(left) != 1 || left[0] != base+"b:1" {
		t.Fatalf("keys left = %v, %v; want only %sb:1", left, err, base)
	}
}

func removeAll(t *testing.T, dir string) {
	if err := os.RemoveAll(dir); err != nil {
		t.Errorf("remove %s: %v", dir, err)
	}
}

func TestSplitRedisPrefix(t *testing.T) {
	for _, c := range []struct{ in, url, prefix string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0", ""},
		{"redis://127.0.0.1:6379/0?key_prefix=cell-7:", "redis://127.0.0.1:6379/0", "cell-7:"},
		{"redis://127.0.0.1:6379/0?max_retries=2&key_prefix=a%3Ab", "redis://127.0.0.1:6379/0?max_retries=2", "a:b"},
		{"not a url %zz", "not a url %zz", ""},
	} {
		url, prefix := storekit.SplitRedisPrefix(c.in)
		if url != c.url || prefix != c.prefix {
			t.Errorf("SplitRedisPrefix(%q) = %q, %q; want %q, %q", c.in, url, prefix, c.url, c.prefix)
		}
	}
}
