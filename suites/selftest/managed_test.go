package selftest

import (
	"testing"
	"time"
)

func TestProxiedDSN(t *testing.T) {
	for _, c := range []struct{ dsn, port, want, addr string }{
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "5432", "postgres://postgres@{{.Storage}}/test?sslmode=disable", "127.0.0.1:5432"},
		{"postgresql://u:p%40ss@localhost/test", "5432", "postgresql://u:p%40ss@{{.Storage}}/test", "localhost:5432"},
		{"redis://127.0.0.1:6379/0", "6379", "redis://{{.Storage}}/0", "127.0.0.1:6379"},
		{"redis://:secret@[::1]:6380", "6379", "redis://:secret@{{.Storage}}", "[::1]:6380"},
	} {
		got, addr, ok := proxiedDSN(c.dsn, c.port)
		if !ok || got != c.want || addr != c.addr {
			t.Errorf("proxiedDSN(%q) = %q, %q, %v; want %q, %q", c.dsn, got, addr, ok, c.want, c.addr)
		}
	}
	for _, unproxied := range []string{"host=127.0.0.1 dbname=test", "", "redis:///0", "unix:///run/redis.sock",
		"rediss://127.0.0.1:6380/0", "postgres://u@h1:5432,h2:5433/test", "postgres://u@127.0.0.1/test?host=/run/pg",
		"postgres://u@db.example:5432/test?sslmode=verify-full"} {
		if _, _, ok := proxiedDSN(unproxied, "1"); ok {
			t.Errorf("proxiedDSN(%q) succeeded", unproxied)
		}
	}
}

// TestManagedTargetStorage: a proxiable store is declared as the target's storage (also on
// IPv6, whose address YAML would read as a list unquoted); any other is passed as it is.
func TestManagedTargetStorage(t *testing.T) {
	for _, c := range []struct {
		kind, pg, redis, storage string
	}{
		{"redis", "", "redis://[::1]:6379/0", "[::1]:6379"},
		{"redis", "", "redis://127.0.0.1:6379/0?key_prefix=retrysafe-selftest%3Ast1%3A1%3A", "127.0.0.1:6379"},
		{"postgres", "postgres://postgres@127.0.0.1:5432/test?search_path=rs_st1_1&sslmode=disable", "", "127.0.0.1:5432"},
		{"postgres", "postgres://postgres@[::1]:5432/test", "", "[::1]:5432"},
		{"redis", "", "unix:///run/redis.sock", ""},
		{"redis", "", "rediss://127.0.0.1:6380/0", ""},
	} {
		st := &stores{opts: &Options{PostgresDSN: c.pg, RedisURL: c.redis, Binary: "retrysafe",
			Retention: 3 * time.Second, LockTimeout: 3 * time.Second}, dir: t.TempDir()}
		tg, err := st.managedTarget(&space{kind: c.kind, cell: 1, dsn: c.pg + c.redis}, "")
		if err != nil {
			t.Errorf("%s %s%s: %v", c.kind, c.pg, c.redis, err)
			continue
		}
		got := ""
		if tg.Storage != nil {
			got = tg.Storage.Address
		}
		if got != c.storage {
			t.Errorf("%s %s%s: storage %q, want %q", c.kind, c.pg, c.redis, got, c.storage)
		}
		tg.Close()
	}
}

func TestProcessProperties(t *testing.T) {
	for name, want := range map[string]bool{"crash-after-claim": true, "crash-under-load": true, "race": false, "load": false, "nope": false} {
		if got := isProcessProperty(name); got != want {
			t.Errorf("isProcessProperty(%q) = %v, want %v", name, got, want)
		}
	}
}
