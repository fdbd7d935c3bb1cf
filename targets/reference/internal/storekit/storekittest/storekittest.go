// Package storekittest holds the test helpers that the reference API's and the reference
// consumer's store tests share: an isolated PostgreSQL schema, an isolated Redis key
// prefix, a burst of concurrent claims and the check of a schema's version table.
package storekittest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// cleanupTimeout bounds each set-up and clean-up step against a shared service.
const cleanupTimeout = 10 * time.Second

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// PostgresSchema creates a fresh schema named prefix plus 16 random hex digits, drops it
// when the test ends, and returns a DSN (storekit.PostgresDSN with its search_path) that
// selects it. An unreachable PostgreSQL fails the test.
func PostgresSchema(t testing.TB, prefix string) string {
	t.Helper()
	base := storekit.PostgresDSN()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("PostgreSQL DSN %q: %v", base, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		t.Fatalf("PostgreSQL is not reachable at %s (start it or set %s): %v", base, storekit.EnvPostgresDSN, err)
	}
	schema := prefix + randomHex(8)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	return withSearchPath(t, base, schema)
}

// withSearchPath adds a search_path runtime parameter to a URL or keyword/value DSN.
func withSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	if !strings.Contains(dsn, "://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("bad PostgreSQL DSN %q: %v", dsn, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// RedisPrefix returns a fresh key prefix, prefix plus 16 random hex digits and ":", whose
// keys (on storekit.RedisURL) are deleted when the test ends.
func RedisPrefix(t testing.TB, prefix string) string {
	t.Helper()
	fresh := prefix + randomHex(8) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		rdb, err := storekit.OpenRedis(ctx, storekit.RedisURL())
		if err != nil {
			t.Errorf("cleaning up Redis prefix %s: %v", fresh, err)
			return
		}
		defer rdb.Close()
		if err := storekit.Purge(ctx, rdb, fresh); err != nil {
			t.Errorf("cleaning up Redis prefix %s: %v", fresh, err)
		}
	})
	return fresh
}

// Burst releases n goroutines at once, the i-th calling claim(i), and counts the outcomes
// they return. Any error fails the test, after all n have returned.
func Burst[O comparable](t testing.TB, n int, claim func(i int) (O, error)) map[O]int {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
		count = map[O]int{}
		errs  []error
	)
	for i := range n {
		wg.Go(func() {
			<-start
			o, err := claim(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			count[o]++
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d concurrent claims failed, first: %v", len(errs), n, errs[0])
	}
	return count
}

// WantVersions checks that db's version table records every migration of s exactly once,
// in order.
func WantVersions(t testing.TB, db *sql.DB, s storekit.Schema) {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM ` + s.VersionTable + ` ORDER BY version`)
	if err != nil {
		t.Fatalf("read %s: %v", s.VersionTable, err)
	}
	defer rows.Close()
	var got, want []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("read %s: %v", s.VersionTable, err)
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read %s: %v", s.VersionTable, err)
	}
	for _, m := range s.Migrations {
		want = append(want, m.Version)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s records versions %v, want %v (each once)", s.VersionTable, got, want)
	}
}
