package storekit

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets/postgres"
)

// DB is a store's database/sql pool with its dialect. Every method is safe for concurrent
// use, also by several processes sharing one database.
type DB struct {
	*sql.DB
	Dialect *Dialect
	// gate (SQLite only) queues this process's write transactions in Go, so they wait in
	// order instead of polling SQLite's busy handler; other processes still meet the
	// busy_timeout.
	gate chan struct{}
}

// SQLiteDSN configures a SQLite file for many goroutines and several processes: WAL lets
// readers run beside the writer, busy_timeout makes a writer wait for the lock instead of
// failing with SQLITE_BUSY, and _txlock=immediate takes the write lock at BEGIN so a
// transaction never has to upgrade a read lock (which fails without waiting).
func SQLiteDSN(path string) string {
	return path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)"
}

// OpenSQLite opens (creating if needed) the SQLite database file at path and migrates it
// to the schema's latest version.
func OpenSQLite(ctx context.Context, path string, s Schema) (*DB, error) {
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite path %q: must not contain '?'", path)
	}
	return Open(ctx, SQLite, SQLiteDSN(path), s, s.Latest())
}

// OpenPostgres connects to PostgreSQL (a pgx URL or keyword/value DSN; a search_path
// parameter selects the schema) and migrates it to the schema's latest version.
func OpenPostgres(ctx context.Context, dsn string, s Schema) (*DB, error) {
	return Open(ctx, Postgres, dsn, s, s.Latest())
}

// maxIdleConns is how many idle connections a store keeps: enough for a same-key burst.
const maxIdleConns = 32

// maxOpenPostgres is how many connections one store holds on PostgreSQL at most, a server that
// many stores and processes share: a same-key burst of 16 and a few more. A request past it
// waits for a free one, and a new connection waits while the server is full (postgres.Open).
const maxOpenPostgres = 20

// Open opens the pool on dsn (for SQLite, a SQLiteDSN), checks the connection and migrates
// up to version target.
func Open(ctx context.Context, d *Dialect, dsn string, s Schema, target int) (*DB, error) {
	open := func(dsn string) (*sql.DB, error) { return sql.Open(d.driver, dsn) }
	if d == Postgres {
		open = func(dsn string) (*sql.DB, error) { return postgres.Open(dsn, maxOpenPostgres) }
	}
	db, err := open(dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", d.Name, err)
	}
	// Keep the connections of a burst open between bursts: database/sql keeps only two idle
	// connections by default, so every concurrent request would otherwise dial (PostgreSQL:
	// TCP and authentication; SQLite: open the file and set its pragmas) before it can work.
	db.SetMaxIdleConns(maxIdleConns)
	db.SetConnMaxIdleTime(time.Minute)
	if err := pingBusy(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect %s: %w", d.Name, err)
	}
	if err := s.Migrate(ctx, db, d, target); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	out := &DB{DB: db, Dialect: d}
	if d.gated {
		out.gate = make(chan struct{}, 1)
	}
	return out, nil
}

// pingBusy checks the connection. A new SQLite connection switches the file to WAL, which
// can fail at once with SQLITE_BUSY while another process opens the same fresh file (SQLite
// does not call its busy handler there): such a failure is retried for a few seconds.
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

// Rebind turns "?" placeholders into the pool's dialect's form.
func (db *DB) Rebind(q string) string { return db.Dialect.Rebind(q) }

// InTx runs fn in a transaction (BEGIN IMMEDIATE on SQLite) and commits when fn returns
// commit=true without error; otherwise it rolls back.
func (db *DB) InTx(ctx context.Context, fn func(tx *sql.Tx) (commit bool, err error)) error {
	if db.gate != nil {
		select {
		case db.gate <- struct{}{}:
			defer func() { <-db.gate }()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	tx, err := db.BeginTx(ctx, nil)
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

// InTxOK is InTx for a transaction whose fn decides whether to commit: it reports whether
// the transaction committed (fn returned true and nothing failed).
func (db *DB) InTxOK(ctx context.Context, fn func(tx *sql.Tx) (bool, error)) (bool, error) {
	var ok bool
	err := db.InTx(ctx, func(tx *sql.Tx) (bool, error) {
		var err error
		ok, err = fn(tx)
		return ok, err
	})
	return ok && err == nil, err
}

// MaxClaimAttempts bounds ClaimLoop; each lost attempt means another claimer made
// progress, so reaching it indicates a bug rather than contention.
const MaxClaimAttempts = 100

// ClaimLoop runs an optimistic claim: attempt in its own transaction (InTx), committed once
// attempt reports done; an attempt that lost a race (done=false) is rolled back and tried
// again, at most MaxClaimAttempts times. key names the claim in the error of the last resort.
func ClaimLoop[R any](ctx context.Context, db *DB, key string, attempt func(tx *sql.Tx) (res R, done bool, err error)) (R, error) {
	var zero R
	for range MaxClaimAttempts {
		var res R
		var done bool
		err := db.InTx(ctx, func(tx *sql.Tx) (bool, error) {
			var err error
			res, done, err = attempt(tx)
			return done, err
		})
		if err != nil {
			return zero, fmt.Errorf("claim: %w", err)
		}
		if done {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("claim: %w", err)
		}
	}
	return zero, fmt.Errorf("claim %q: no decision after %d attempts", key, MaxClaimAttempts)
}

// Queryer is what *sql.DB, *DB and *sql.Tx share: a lookup runs in or out of a transaction.
type Queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ExecTx runs one write statement ("?" placeholders) in its own transaction and returns
// the rows affected.
func (db *DB) ExecTx(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.InTx(ctx, func(tx *sql.Tx) (bool, error) {
		r, err := tx.ExecContext(ctx, db.Rebind(query), args...)
		if err != nil {
			return false, err
		}
		n, err = r.RowsAffected()
		return err == nil, err
	})
	return n, err
}
