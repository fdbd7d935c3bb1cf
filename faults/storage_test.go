package faults

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultPGDSN is the test database used when RETRYSAFE_PG_DSN is not set.
const defaultPGDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// pgConfig returns the test database's configuration and its host:port. The database must be
// reachable: these tests fail rather than skip, so that a missing database is noticed.
func pgConfig(t *testing.T) (*pgx.ConnConfig, string) {
	t.Helper()
	dsn := os.Getenv("RETRYSAFE_PG_DSN")
	if dsn == "" {
		dsn = defaultPGDSN
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("RETRYSAFE_PG_DSN: %v", err)
	}
	cfg.ConnectTimeout = 5 * time.Second
	conn, err := pgx.ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("PostgreSQL is not reachable at %s:%d (%v); start it or point RETRYSAFE_PG_DSN at one "+
			"(default %s)", cfg.Host, cfg.Port, err, defaultPGDSN)
	}
	_ = conn.Close(testCtx(t))
	return cfg, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// storageT puts a storage proxy in front of the test database and returns a connect function
// that goes through it.
func storageT(t *testing.T) (*StorageProxy, *pgx.ConnConfig, func() (*pgx.Conn, error)) {
	t.Helper()
	cfg, address := pgConfig(t)
	sp, err := NewStorageProxy(newEmbeddedT(t), address, "")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(sp.Listen())
	viaProxy := cfg.Copy()
	viaProxy.Host, viaProxy.Fallbacks = host, nil
	p, _ := strconv.Atoi(port)
	viaProxy.Port = uint16(p)
	connect := func() (*pgx.Conn, error) {
		conn, err := pgx.ConnectConfig(testCtx(t), viaProxy)
		if err == nil {
			t.Cleanup(func() { _ = conn.Close(context.Background()) })
		}
		return conn, err
	}
	return sp, cfg, connect
}

func mustConnect(t *testing.T, connect func() (*pgx.Conn, error)) *pgx.Conn {
	t.Helper()
	conn, err := connect()
	if err != nil {
		t.Fatalf("connect through the storage proxy: %v", err)
	}
	return conn
}

// timedSelect runs SELECT 1 on conn and returns how long it took.
func timedSelect(t *testing.T, conn *pgx.Conn) time.Duration {
	t.Helper()
	start := time.Now()
	var one int
	if err := conn.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 through the storage proxy: %d, %v", one, err)
	}
	return time.Since(start)
}

func TestStorageProxyQuery(t *testing.T) {
	sp, cfg, connect := storageT(t)
	if sp.Address() != net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))) || sp.Listen() == sp.Address() {
		t.Errorf("proxy %s -> %s, want a new address in front of %s:%d", sp.Listen(), sp.Address(), cfg.Host, cfg.Port)
	}
	timedSelect(t, mustConnect(t, connect))
}

func TestStorageProxyLatency(t *testing.T) {
	sp, _, connect := storageT(t)
	conn := mustConnect(t, connect)
	const d = 100 * time.Millisecond
	f := sp.Latency(d)
	inject(t, f)
	if took := timedSelect(t, conn); took < d-timingSlack {
		t.Errorf("SELECT 1 with %s took %v, want at least %v", f.Name(), took, d)
	}
	heal(t, f)
	if took := timedSelect(t, conn); took >= d {
		t.Errorf("SELECT 1 after heal took %v, want under %v", took, d)
	}
}

func TestStorageProxyResetCutsTransaction(t *testing.T) {
	sp, cfg, connect := storageT(t)
	conn := mustConnect(t, connect)
	tx, err := conn.Begin(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := tx.QueryRow(testCtx(t), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	f := sp.Reset()
	inject(t, f)
	var one int
	if err := tx.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err == nil {
		t.Fatalf("a statement in a transaction went through %s", f.Name())
	}
	if _, err := connect(); err == nil {
		t.Errorf("a new connection succeeded through %s", f.Name())
	}
	heal(t, f)
	waitBackendGone(t, cfg, pid)
	timedSelect(t, mustConnect(t, connect))
}

// waitBackendGone waits until the server has ended the session pid (and rolled back its
// transaction), asking it directly, not through the proxy.
func waitBackendGone(t *testing.T, cfg *pgx.ConnConfig, pid int) {
	t.Helper()
	ctx := testCtx(t)
	direct, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(context.Background())
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		err := direct.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n)
		if err != nil {
			t.Fatalf("ask the server about session %d: %v", pid, err)
		}
		if n == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("session %d still open on the server after the reset", pid)
		}
	}
}
