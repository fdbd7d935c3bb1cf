package selftest

import "testing"

func TestProxiedDSN(t *testing.T) {
	for _, c := range []struct{ dsn, port, want, addr string }{
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "5432", "postgres://postgres@{{.Storage}}/test?sslmode=disable", "127.0.0.1:5432"},
		{"postgres://u:p%40ss@localhost/test", "5432", "postgres://u:p%40ss@{{.Storage}}/test", "localhost:5432"},
		{"redis://127.0.0.1:6379/0", "6379", "redis://{{.Storage}}/0", "127.0.0.1:6379"},
		{"redis://:secret@[::1]:6380", "6379", "redis://:secret@{{.Storage}}", "[::1]:6380"},
	} {
		got, addr, ok := proxiedDSN(c.dsn, c.port)
		if !ok || got != c.want || addr != c.addr {
			t.Errorf("proxiedDSN(%q) = %q, %q, %v; want %q, %q", c.dsn, got, addr, ok, c.want, c.addr)
		}
	}
	for _, bad := range []string{"host=127.0.0.1 dbname=test", "", "redis:///0"} {
		if _, _, ok := proxiedDSN(bad, "1"); ok {
			t.Errorf("proxiedDSN(%q) succeeded", bad)
		}
	}
}
