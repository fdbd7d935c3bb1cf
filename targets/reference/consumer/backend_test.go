package consumer

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit/storekittest"
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

func testRedisURL() string { return storekit.RedisURL() }

// newPGSchema creates a schema rsc_test_<random>, drops it when the test ends, and returns
// a DSN whose search_path selects it. An unreachable PostgreSQL fails the test.
func newPGSchema(t *testing.T) string {
	t.Helper()
	return storekittest.PostgresSchema(t, "rsc_test_")
}

// newRedisPrefix returns a fresh key prefix whose keys are deleted when the test ends.
func newRedisPrefix(t *testing.T) string {
	t.Helper()
	return storekittest.RedisPrefix(t, "retrysafe-consumer-test:")
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
