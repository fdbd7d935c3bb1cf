package selftest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/postgres"
)

// Every cell of a self-test has places of its own in the services the cells share, named from
// the self-test's run id and the cell's number: a PostgreSQL schema (its DSN's search_path), a
// Redis key prefix (its URL's key_prefix), the names of its broker topology, and ports reserved
// for its processes (faults/ports). A cell's pruner then deletes only its own rows, its keys
// are its own, and no cell can reach another's process or queue. A cell's schema and keys go
// when it ends, also when it fails; the self-test sweeps whatever is left under its run id when
// it ends, also when it is interrupted.

// newRunID returns a self-test's run id: "st" and 8 hex digits.
func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "st" + hex.EncodeToString(b[:])
}

// space is one cell's own places in the shared services.
type space struct {
	sv    *services
	cell  int64
	kind  string // the store: its schema or prefix is made only for postgres or redis
	made  bool   // the schema was created
	dsn   string // the store's DSN (postgres: with its search_path; redis: with its key_prefix)
	names string // the label of its broker topology's names
}

// services are the shared services of one self-test, and what its cells made in them.
type services struct {
	runID       string
	postgresDSN string
	redisURL    string

	mu    sync.Mutex
	redis *redis.Client
}

// schema is cell's PostgreSQL schema.
func (sv *services) schema(cell int64) string { return fmt.Sprintf("rs_%s_%d", sv.runID, cell) }

// schemaPattern matches every schema of this self-test (LIKE).
func (sv *services) schemaPattern() string { return "rs\\_" + sv.runID + "\\_%" }

// redisPrefix is cell's Redis key prefix; every one starts with the run's.
func (sv *services) redisPrefix(cell int64) string {
	return fmt.Sprintf("%s%d:", sv.runRedisPrefix(), cell)
}

// runRedisPrefix starts every Redis key of this self-test.
func (sv *services) runRedisPrefix() string { return "retrysafe-selftest:" + sv.runID + ":" }

// brokerLabel starts the names of cell's broker topology (after broker.DefaultNamePrefix).
func (sv *services) brokerLabel(cell int64) string { return fmt.Sprintf("%s-%d", sv.runID, cell) }

// brokerPrefix starts the name of every broker topology of this self-test.
func (sv *services) brokerPrefix() string { return broker.DefaultNamePrefix + "-" + sv.runID + "-" }

// open makes cell's places for a store of kind: for postgres its schema (created now), for redis
// its prefix. Release removes them.
func (sv *services) open(ctx context.Context, cell int64, kind string) (*space, error) {
	sp := &space{sv: sv, cell: cell, kind: kind, names: sv.brokerLabel(cell)}
	switch kind {
	case "postgres":
		if err := sv.pgExec(ctx, "CREATE SCHEMA "+pgx.Identifier{sv.schema(cell)}.Sanitize()); err != nil {
			return nil, fmt.Errorf("create the cell's PostgreSQL schema: %w", err)
		}
		sp.made = true
		sp.dsn = withSearchPath(sv.postgresDSN, sv.schema(cell))
	case "redis":
		sp.dsn = withQuery(sv.redisURL, "key_prefix", sv.redisPrefix(cell))
	}
	return sp, nil
}

// release drops the cell's schema and deletes its Redis keys, whatever the cell's context
// became.
func (sp *space) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch {
	case sp.kind == "postgres" && sp.made:
		return sp.sv.pgExec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{sp.sv.schema(sp.cell)}.Sanitize()+" CASCADE")
	case sp.kind == "redis":
		return sp.sv.deleteKeys(ctx, sp.sv.redisPrefix(sp.cell))
	}
	return nil
}

// pgExec runs one statement on the self-test's PostgreSQL, on a connection of its own.
func (sv *services) pgExec(ctx context.Context, sql string) error {
	conn, err := postgres.Connect(ctx, sv.postgresDSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// client returns the self-test's Redis client, connected on first use.
func (sv *services) client() (*redis.Client, error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.redis == nil {
		opts, err := redis.ParseURL(sv.redisURL)
		if err != nil {
			return nil, err
		}
		sv.redis = redis.NewClient(opts)
	}
	return sv.redis, nil
}

// deleteKeys deletes every Redis key that starts with prefix.
func (sv *services) deleteKeys(ctx context.Context, prefix string) error {
	keys, err := sv.keys(ctx, prefix)
	if err != nil || len(keys) == 0 {
		return err
	}
	rdb, err := sv.client()
	if err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := rdb.Unlink(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// keys lists the Redis keys that start with prefix (which holds no glob character).
func (sv *services) keys(ctx context.Context, prefix string) ([]string, error) {
	rdb, err := sv.client()
	if err != nil {
		return nil, err
	}
	var out []string
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	return out, iter.Err()
}

// schemas lists the PostgreSQL schemas of this self-test that exist.
func (sv *services) schemas(ctx context.Context) ([]string, error) {
	conn, err := postgres.Connect(ctx, sv.postgresDSN)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1 ORDER BY nspname", sv.schemaPattern())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Left is what a self-test left in the services its cells shared: a failure when not empty.
type Left struct {
	// Schemas are PostgreSQL schemas of its cells.
	Schemas []string `json:"schemas,omitempty"`
	// RedisKeys counts the Redis keys under its prefix.
	RedisKeys int `json:"redis_keys,omitempty"`
	// Brokers are RabbitMQ queues and exchanges and JetStream streams under its names.
	Brokers *broker.Inventory `json:"brokers,omitempty"`
}

// Empty reports whether nothing was left.
func (l Left) Empty() bool {
	return len(l.Schemas) == 0 && l.RedisKeys == 0 && (l.Brokers == nil || l.Brokers.Empty())
}

// String says what was left.
func (l Left) String() string {
	var parts []string
	if len(l.Schemas) > 0 {
		parts = append(parts, fmt.Sprintf("PostgreSQL schemas %s", strings.Join(l.Schemas, ", ")))
	}
	if l.RedisKeys > 0 {
		parts = append(parts, fmt.Sprintf("%d Redis keys", l.RedisKeys))
	}
	if l.Brokers != nil && !l.Brokers.Empty() {
		parts = append(parts, l.Brokers.String()+" on the brokers")
	}
	return strings.Join(parts, "; ")
}

// sweep drops every schema and deletes every Redis key of this self-test that is still there
// (its cells remove their own as they end: what is left here is an interrupted cell's), then
// says what could not be removed, together with what is on the brokers under its names (which
// each cell's harness deletes at its end). used says which services the self-test used.
func (sv *services) sweep(used map[string]bool) (Left, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var left Left
	var errs []error
	if used["postgres"] {
		schemas, err := sv.schemas(ctx)
		errs = append(errs, err)
		for _, s := range schemas {
			errs = append(errs, sv.pgExec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE"))
		}
		left.Schemas, err = sv.schemas(ctx)
		errs = append(errs, err)
	}
	if used["redis"] {
		errs = append(errs, sv.deleteKeys(ctx, sv.runRedisPrefix()))
		keys, err := sv.keys(ctx, sv.runRedisPrefix())
		errs = append(errs, err)
		left.RedisKeys = len(keys)
	}
	if used["brokers"] {
		inv, err := broker.TakeInventory(ctx)
		if err == nil {
			inv = inv.WithPrefix(sv.brokerPrefix())
			left.Brokers = &inv
		}
		errs = append(errs, err)
	}
	sv.mu.Lock()
	if sv.redis != nil {
		sv.redis.Close()
		sv.redis = nil
	}
	sv.mu.Unlock()
	return left, errors.Join(errs...)
}

// withSearchPath sets the search_path of a pgx DSN: a URL's query parameter, or a keyword/value
// DSN's pair.
func withSearchPath(dsn, schema string) string {
	if strings.Contains(dsn, "://") {
		return withQuery(dsn, "search_path", schema)
	}
	return dsn + " search_path=" + schema
}

// withQuery sets one query parameter of a URL (a DSN that is no URL is returned as it is).
func withQuery(raw, name, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// Connections one job on PostgreSQL may hold at once, and the connections left to whatever else
// uses the server meanwhile (a go test beside the self-test in CI). A store holds 20 at most;
// two jobs at once peaked at 43 and three at 54 (sampled every 200 ms over a self-test); every
// client the self-test starts waits for a free connection while the server is full
// (targets/postgres), so a peak past the budget delays a job, it does not fail it.
const (
	postgresPerJob   = 16
	postgresHeadroom = 25
)

// postgresSlots is how many jobs on PostgreSQL may run at once: what the server's
// max_connections leaves, less its reserved connections, those in use now and the headroom, for
// postgresPerJob each; at least one. When the server cannot be asked it is one.
func postgresSlots(ctx context.Context, dsn string, progress io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := postgres.Connect(ctx, dsn)
	if err != nil {
		fmt.Fprintf(progress, "  PostgreSQL: cannot ask for max_connections (%v): one job on it at a time\n", err)
		return 1
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var maxConns, reserved, inUse int
	err = conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int,
		current_setting('superuser_reserved_connections')::int,
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')`).Scan(&maxConns, &reserved, &inUse)
	if err != nil {
		fmt.Fprintf(progress, "  PostgreSQL: cannot ask for max_connections (%v): one job on it at a time\n", err)
		return 1
	}
	return max(1, (maxConns-reserved-inUse-postgresHeadroom)/postgresPerJob)
}
