package reference

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// dialect holds what differs between SQLite and PostgreSQL. Queries are written with "?"
// placeholders and rebound for PostgreSQL.
type dialect struct {
	name          string
	numbered      bool   // placeholders are $1, $2, ...
	migrationLock string // statement run first in the migration transaction
	recordOrder   string // ORDER BY clause of Records: oldest first, then insertion order
}

var (
	sqliteDialect = &dialect{
		name:        "sqlite",
		recordOrder: "created_at, rowid",
	}
	postgresDialect = &dialect{
		name:          "postgres",
		numbered:      true,
		migrationLock: `SELECT pg_advisory_xact_lock(hashtext('retrysafe.migrate.' || COALESCE(current_schema(), '')))`,
		recordOrder:   "created_at, seq",
	}
)

// rebind turns "?" placeholders into the dialect's form.
func (d *dialect) rebind(q string) string {
	if !d.numbered {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// migration is one numbered schema version. Each dialect has its own statements; a
// migration only ever adds (tables, columns with defaults, indexes), so data written under
// an older version stays readable by a newer binary.
type migration struct {
	version  int
	name     string
	sqlite   []string
	postgres []string
}

// migrations are applied in order; never edit a released one, append a new version.
var migrations = []migration{
	{
		version: 1,
		name:    "keys and records",
		sqlite: []string{
			`CREATE TABLE IF NOT EXISTS rs_keys (
				scope       TEXT PRIMARY KEY,
				fingerprint TEXT NOT NULL,
				state       TEXT NOT NULL,
				token       INTEGER NOT NULL,
				created_at  INTEGER NOT NULL,
				locked_at   INTEGER NOT NULL,
				status      INTEGER NOT NULL DEFAULT 0,
				body        BLOB
			)`,
			`CREATE TABLE IF NOT EXISTS rs_records (
				id         TEXT PRIMARY KEY,
				tenant     TEXT NOT NULL,
				kind       TEXT NOT NULL,
				ref        TEXT NOT NULL,
				amount     INTEGER NOT NULL,
				currency   TEXT NOT NULL,
				created_at INTEGER NOT NULL
			)`,
		},
		postgres: []string{
			`CREATE TABLE IF NOT EXISTS rs_keys (
				scope       TEXT PRIMARY KEY,
				fingerprint TEXT NOT NULL,
				state       TEXT NOT NULL,
				token       BIGINT NOT NULL,
				created_at  BIGINT NOT NULL,
				locked_at   BIGINT NOT NULL,
				status      INTEGER NOT NULL DEFAULT 0,
				body        BYTEA
			)`,
			`CREATE TABLE IF NOT EXISTS rs_records (
				id         TEXT PRIMARY KEY,
				tenant     TEXT NOT NULL,
				kind       TEXT NOT NULL,
				ref        TEXT NOT NULL,
				amount     BIGINT NOT NULL,
				currency   TEXT NOT NULL,
				created_at BIGINT NOT NULL
			)`,
		},
	},
	{
		// v2: the observers' lookup and the pruner get indexes; PostgreSQL records get an
		// insertion sequence so that records created in the same microsecond keep their
		// order (SQLite orders by its implicit rowid).
		version: 2,
		name:    "record order and indexes",
		sqlite: []string{
			`CREATE INDEX IF NOT EXISTS rs_records_by_ref ON rs_records (tenant, kind, ref, created_at)`,
			`CREATE INDEX IF NOT EXISTS rs_keys_by_created ON rs_keys (created_at)`,
		},
		postgres: []string{
			`ALTER TABLE rs_records ADD COLUMN IF NOT EXISTS seq BIGSERIAL`,
			`CREATE INDEX IF NOT EXISTS rs_records_by_ref ON rs_records (tenant, kind, ref, created_at, seq)`,
			`CREATE INDEX IF NOT EXISTS rs_keys_by_created ON rs_keys (created_at)`,
		},
	},
}

// latestVersion is the schema version this binary migrates to.
func latestVersion() int { return migrations[len(migrations)-1].version }

// migrate brings the schema up to version target (latestVersion for normal use) in one
// transaction. Concurrent migrators are serialised: PostgreSQL takes a transaction-scoped
// advisory lock keyed by the current schema; SQLite's transaction is BEGIN IMMEDIATE (the
// DSN's _txlock), which holds the database's write lock from the start. A schema that is
// already newer than target is left alone.
func migrate(ctx context.Context, db *sql.DB, d *dialect, target int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if d.migrationLock != "" {
		if _, err := tx.ExecContext(ctx, d.migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}
	current, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	for _, m := range migrations {
		if m.version <= current || m.version > target {
			continue
		}
		if err := applyMigration(ctx, tx, d, m); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// schemaVersion creates the version table if needed and returns the highest applied version
// (0 for an empty database).
func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	const create = `CREATE TABLE IF NOT EXISTS rs_schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at BIGINT NOT NULL
	)`
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return 0, fmt.Errorf("migrate: create rs_schema_version: %w", err)
	}
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM rs_schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("migrate: read version: %w", err)
	}
	return int(v.Int64), nil
}

// applyMigration runs one migration's statements and records its version.
func applyMigration(ctx context.Context, tx *sql.Tx, d *dialect, m migration) error {
	stmts := m.sqlite
	if d.name == "postgres" {
		stmts = m.postgres
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("migrate: v%d %s: %w", m.version, m.name, err)
		}
	}
	ins := d.rebind(`INSERT INTO rs_schema_version (version, name, applied_at) VALUES (?, ?, ?)`)
	if _, err := tx.ExecContext(ctx, ins, m.version, m.name, nowMicros()); err != nil {
		return fmt.Errorf("migrate: record v%d: %w", m.version, err)
	}
	return nil
}
