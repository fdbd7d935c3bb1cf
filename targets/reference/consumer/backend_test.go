package consumer

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference"
)

// backend is one isolated store location for one test. open returns a new Store value on
// it each time: several values are several instances of one service (the memory store,
// which cannot be shared, returns the same value every time). Every value is closed when
// the test ends.
type backend struct {
	name string
	open func(t *testing.T) Store
}

// newBackend prepares an isolated location of a store: a temporary SQLite file, a fresh
// PostgreSQL schema or a fresh Redis key prefix, each removed when the test ends.
func newBackend(t *testing.T, store string) backend {
	t.Helper()
	switch store {
	case "memory":
		m := NewMemoryStore()
		return backend{store, func(*testing.T) Store { return m }}
	case "sqlite":
		path := filepath.Join(t.TempDir(), "consumer.db")
		return backend{store, opener(func(ctx context.Context) (Store, error) { return OpenSQLite(ctx, path) })}
	case "postgres":
		dsn := newPGSchema(t)
		return backend{store, opener(func(ctx context.Context) (Store, error) { return OpenPostgres(ctx, dsn) })}
	case "redis":
		prefix := newRedisPrefix(t)
		return backend{store, opener(func(ctx context.Context) (Store, error) {
			return OpenRedis(ctx, testRedisURL(), prefix)
		})}
	}
	t.Fatalf("unknown store %q", store)
	return backend{}
}

// ctxT is a context for set-up steps.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// opener opens stores with open, failing the test on an error and closing each store
// when the test ends (a crash test may have closed it already).
func opener(open func(ctx context.Context) (Store, error)) func(t *testing.T) Store {
	return func(t *testing.T) Store {
		t.Helper()
		s, err := open(ctxT(t))
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func testPGDSN() string { return envOr(reference.EnvPostgresDSN, reference.DefaultPostgresDSN) }

func testRedisURL() string { return envOr(reference.EnvRedisURL, reference.DefaultRedisURL) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// newPGSchema creates a schema rsc_test_<random>, drops it when the test ends, and returns
// a DSN whose search_path selects it. An unreachable PostgreSQL fails the test.
func newPGSchema(t *testing.T) string {
	t.Helper()
	base := testPGDSN()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("PostgreSQL DSN %q: %v", base, err)
	}
	schema := "rsc_test_" + randomHex(8)
	if _, err := admin.ExecContext(ctxT(t), "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("PostgreSQL at %s (start it or set %s): create schema: %v", base, reference.EnvPostgresDSN, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	return withSearchPath(t, base, schema)
}

// withSearchPath adds a search_path parameter to a URL or keyword/value DSN.
func withSearchPath(t *testing.T, dsn, schema string) string {
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

// newRedisPrefix returns a fresh key prefix whose keys are deleted when the test ends.
func newRedisPrefix(t *testing.T) string {
	t.Helper()
	prefix := "retrysafe-consumer-test:" + randomHex(8) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := OpenRedis(ctx, testRedisURL(), prefix)
		if err != nil {
			t.Errorf("cleaning up Redis prefix %s: %v", prefix, err)
			return
		}
		defer s.Close()
		if err := s.Purge(ctx); err != nil {
			t.Errorf("cleaning up Redis prefix %s: %v", prefix, err)
		}
	})
	return prefix
}

// forEachStore runs f once per store, in parallel subtests.
func forEachStore(t *testing.T, stores []string, f func(t *testing.T, b backend)) {
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			f(t, newBackend(t, store))
		})
	}
}
