package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// SQLStore is the Store on SQLite or PostgreSQL through database/sql, in the tables
// rsc_events, rsc_effects, rsc_objects and rsc_schema_version. Every method is safe for
// concurrent use, also by several processes sharing one database.
type SQLStore struct {
	db *sql.DB
	d  *dialect
	// gate (SQLite only) queues this process's write transactions in Go, so they wait in
	// order instead of polling SQLite's busy handler; other processes meet busy_timeout.
	gate chan struct{}
}

var _ Store = (*SQLStore)(nil)

// sqliteDSN configures a SQLite file for many goroutines and several processes: WAL lets
// readers run beside the writer, busy_timeout makes a writer wait for the lock, and
// _txlock=immediate takes the write lock at BEGIN so no transaction has to upgrade a lock.
func sqliteDSN(path string) string {
	return path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)"
}

// OpenSQLite opens (creating if needed) the SQLite database file at path and migrates its
// schema.
func OpenSQLite(ctx context.Context, path string) (*SQLStore, error) {
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite path %q: must not contain '?'", path)
	}
	return openSQL(ctx, "sqlite", sqliteDSN(path), sqliteDialect)
}

// OpenPostgres connects to PostgreSQL (a pgx URL or keyword/value DSN; a search_path
// parameter selects the schema) and migrates its schema.
func OpenPostgres(ctx context.Context, dsn string) (*SQLStore, error) {
	return openSQL(ctx, "pgx", dsn, postgresDialect)
}

// maxIdleConns is how many idle connections a store keeps: enough for a redelivery burst.
const maxIdleConns = 32

// openSQL opens the pool, checks the connection and migrates.
func openSQL(ctx context.Context, driver, dsn string, d *dialect) (*SQLStore, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", d.name, err)
	}
	db.SetMaxIdleConns(maxIdleConns)
	db.SetConnMaxIdleTime(time.Minute)
	if err := pingBusy(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect %s: %w", d.name, err)
	}
	if err := migrate(ctx, db, d); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	s := &SQLStore{db: db, d: d}
	if d.name == "sqlite" {
		s.gate = make(chan struct{}, 1)
	}
	return s, nil
}

// pingBusy checks the connection. A new SQLite connection switches the file to WAL, which
// can fail at once with SQLITE_BUSY while another process opens the same fresh file: such
// a failure is retried for a few seconds.
func pingBusy(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		err := db.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// isBusy reports SQLite's "database is locked".
func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// Close closes the connection pool.
func (s *SQLStore) Close() error { return s.db.Close() }

// inTx runs fn in a transaction and commits when fn returns commit=true without error;
// otherwise it rolls back.
func (s *SQLStore) inTx(ctx context.Context, fn func(tx *sql.Tx) (commit bool, err error)) error {
	if s.gate != nil {
		select {
		case s.gate <- struct{}{}:
			defer func() { <-s.gate }()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	commit, err := fn(tx)
	if err != nil || !commit {
		if rbErr := tx.Rollback(); rbErr != nil && err == nil {
			err = rbErr
		}
		return err
	}
	return tx.Commit()
}

// maxClaimAttempts bounds the optimistic claim loop; each lost attempt means another
// claimer made progress, so reaching it indicates a bug rather than contention.
const maxClaimAttempts = 100

// Claim implements Store: INSERT ... ON CONFLICT DO NOTHING RETURNING for a new event;
// otherwise read the record, apply Decide, and on a reset update it only if its token is
// unchanged (optimistic fencing), trying again when another claimer won.
func (s *SQLStore) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	for range maxClaimAttempts {
		var res ClaimResult
		var done bool
		err := s.inTx(ctx, func(tx *sql.Tx) (bool, error) {
			var err error
			res, done, err = s.claimOnce(ctx, tx, req)
			return done, err
		})
		if err != nil {
			return ClaimResult{}, fmt.Errorf("claim: %w", err)
		}
		if done {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return ClaimResult{}, fmt.Errorf("claim: %w", err)
		}
	}
	return ClaimResult{}, fmt.Errorf("claim %q: no decision after %d attempts", req.Key, maxClaimAttempts)
}

// claimOnce makes one claim attempt; done=false means it lost a race and must be retried.
func (s *SQLStore) claimOnce(ctx context.Context, tx *sql.Tx, req ClaimRequest) (ClaimResult, bool, error) {
	fresh := freshRow(req, nil)
	var token int64
	err := tx.QueryRowContext(ctx, s.d.rebind(`INSERT INTO rsc_events
		(dedupe_key, state, token, created_at, locked_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (dedupe_key) DO NOTHING RETURNING token`),
		fresh.Key, string(fresh.State), fresh.Token, fresh.CreatedAt.UnixMicro(),
		fresh.LockedAt.UnixMicro()).Scan(&token)
	if err == nil {
		return ClaimResult{Outcome: Claimed, Token: token}, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return ClaimResult{}, false, err
	}
	row, err := s.lookup(ctx, tx, req.Key)
	if err != nil || row == nil {
		return ClaimResult{}, false, err // deleted since the insert: try again
	}
	outcome, reset := Decide(row, req)
	if !reset {
		return ClaimResult{Outcome: outcome}, true, nil
	}
	next := freshRow(req, row)
	r, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE rsc_events
		SET state = ?, token = ?, created_at = ?, locked_at = ? WHERE dedupe_key = ? AND token = ?`),
		string(next.State), next.Token, next.CreatedAt.UnixMicro(), next.LockedAt.UnixMicro(),
		req.Key, row.Token)
	if err != nil {
		return ClaimResult{}, false, err
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return ClaimResult{}, false, err // fenced by a concurrent reset: try again
	}
	return ClaimResult{Outcome: Claimed, Token: next.Token}, true, nil
}

// queryer is what *sql.DB and *sql.Tx share.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Lookup implements Store.
func (s *SQLStore) Lookup(ctx context.Context, key string) (*EventRow, error) {
	row, err := s.lookup(ctx, s.db, key)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	return row, nil
}

func (s *SQLStore) lookup(ctx context.Context, q queryer, key string) (*EventRow, error) {
	var (
		row               EventRow
		state             string
		created, lockedAt int64
	)
	err := q.QueryRowContext(ctx, s.d.rebind(`SELECT dedupe_key, state, token, created_at, locked_at
		FROM rsc_events WHERE dedupe_key = ?`), key).Scan(&row.Key, &state, &row.Token, &created, &lockedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	row.State = EventState(state)
	row.CreatedAt = time.UnixMicro(created).UTC()
	row.LockedAt = time.UnixMicro(lockedAt).UTC()
	return &row, nil
}

// Prune implements Store.
func (s *SQLStore) Prune(ctx context.Context, createdBefore time.Time) (int, error) {
	n, err := s.exec(ctx, `DELETE FROM rsc_events WHERE created_at < ?`, storeTime(createdBefore).UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	return int(n), nil
}

// exec runs one write statement in its own transaction and returns the rows affected.
func (s *SQLStore) exec(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) (bool, error) {
		r, err := tx.ExecContext(ctx, s.d.rebind(query), args...)
		if err != nil {
			return false, err
		}
		n, err = r.RowsAffected()
		return err == nil, err
	})
	return n, err
}
