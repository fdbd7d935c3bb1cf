package storekit

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Migration is one numbered schema version, with the statements of each dialect. A
// migration only ever adds (tables, columns with defaults, indexes), so data written under
// an older version stays readable by a newer binary.
type Migration struct {
	Version  int
	Name     string
	SQLite   []string
	Postgres []string
}

// statements are the migration's statements in dialect d.
func (m Migration) statements(d *Dialect) []string {
	if d == Postgres {
		return m.Postgres
	}
	return m.SQLite
}

// Schema is one store's list of migrations and the names that keep it apart from another
// store's in the same database (and PostgreSQL schema).
type Schema struct {
	// VersionTable records every applied version: (version, name, applied_at).
	VersionTable string
	// LockKey names the PostgreSQL advisory lock that serialises migrators; the current
	// schema is appended, so migrators of different schemas do not wait for each other.
	LockKey string
	// Migrations are applied in order; never edit a released one, append a new version.
	Migrations []Migration
}

// Latest is the schema version this binary migrates to.
func (s Schema) Latest() int { return s.Migrations[len(s.Migrations)-1].Version }

// Migrate brings the database up to version target (Latest for normal use) in one
// transaction. Concurrent migrators are serialised: PostgreSQL takes a transaction-scoped
// advisory lock (LockKey and the current schema); SQLite's transaction is BEGIN IMMEDIATE
// (SQLiteDSN's _txlock), which holds the database's write lock from the start. A database
// already at or beyond target is left alone.
func (s Schema) Migrate(ctx context.Context, db *sql.DB, d *Dialect, target int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if lock := d.migrationLock(s.LockKey); lock != "" {
		if _, err := tx.ExecContext(ctx, lock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}
	current, err := s.version(ctx, tx)
	if err != nil {
		return err
	}
	for _, m := range s.Migrations {
		if m.Version <= current || m.Version > target {
			continue
		}
		if err := s.apply(ctx, tx, d, m); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// version creates the version table if needed and returns the highest applied version (0
// for an empty database).
func (s Schema) version(ctx context.Context, tx *sql.Tx) (int, error) {
	create := `CREATE TABLE IF NOT EXISTS ` + s.VersionTable + ` (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at BIGINT NOT NULL
	)`
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return 0, fmt.Errorf("migrate: create %s: %w", s.VersionTable, err)
	}
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM `+s.VersionTable).Scan(&v); err != nil {
		return 0, fmt.Errorf("migrate: read version: %w", err)
	}
	return int(v.Int64), nil
}

// apply runs one migration's statements and records its version.
func (s Schema) apply(ctx context.Context, tx *sql.Tx, d *Dialect, m Migration) error {
	for _, stmt := range m.statements(d) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: v%d %s: %w", m.Version, m.Name, err)
		}
	}
	ins := d.Rebind(`INSERT INTO ` + s.VersionTable + ` (version, name, applied_at) VALUES (?, ?, ?)`)
	if _, err := tx.ExecContext(ctx, ins, m.Version, m.Name, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("migrate: record v%d: %w", m.Version, err)
	}
	return nil
}
