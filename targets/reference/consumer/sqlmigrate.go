package consumer

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dialect holds what differs between SQLite and PostgreSQL. Queries are written with "?"
// placeholders and rebound for PostgreSQL.
type dialect struct {
	name          string
	numbered      bool   // placeholders are $1, $2, ...
	migrationLock string // statement run first in the migration transaction
}

var (
	sqliteDialect   = &dialect{name: "sqlite"}
	postgresDialect = &dialect{
		name:     "postgres",
		numbered: true,
		migrationLock: `SELECT pg_advisory_xact_lock(hashtext('retrysafe.consumer.migrate.' ||
			COALESCE(current_schema(), '')))`,
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

// migration is one numbered schema version, with the statements of each dialect. A
// migration only ever adds, so data written under an older version stays readable.
type migration struct {
	version  int
	name     string
	sqlite   []string
	postgres []string
}

// migrations are applied in order; never edit a released one, append a new version. Every
// table starts with rsc_ so that the consumer can share a database (and a schema) with the
// reference API (rs_ tables).
var migrations = []migration{
	{
		version: 1,
		name:    "events, effects and objects",
		sqlite: []string{
			`CREATE TABLE IF NOT EXISTS rsc_events (
				dedupe_key TEXT PRIMARY KEY,
				state      TEXT NOT NULL,
				token      INTEGER NOT NULL,
				created_at INTEGER NOT NULL,
				locked_at  INTEGER NOT NULL
			)`,
			`CREATE INDEX IF NOT EXISTS rsc_events_by_created ON rsc_events (created_at)`,
			`CREATE TABLE IF NOT EXISTS rsc_effects (
				seq        INTEGER PRIMARY KEY,
				event      TEXT NOT NULL,
				object     TEXT NOT NULL,
				version    INTEGER NOT NULL,
				created_at INTEGER NOT NULL
			)`,
			`CREATE INDEX IF NOT EXISTS rsc_effects_by_event ON rsc_effects (event, seq)`,
			`CREATE INDEX IF NOT EXISTS rsc_effects_by_object ON rsc_effects (object, seq)`,
			`CREATE TABLE IF NOT EXISTS rsc_objects (
				object     TEXT PRIMARY KEY,
				version    INTEGER NOT NULL,
				event      TEXT NOT NULL,
				updated_at INTEGER NOT NULL
			)`,
		},
		postgres: []string{
			`CREATE TABLE IF NOT EXISTS rsc_events (
				dedupe_key TEXT PRIMARY KEY,
				state      TEXT NOT NULL,
				token      BIGINT NOT NULL,
				created_at BIGINT NOT NULL,
				locked_at  BIGINT NOT NULL
			)`,
			`CREATE INDEX IF NOT EXISTS rsc_events_by_created ON rsc_events (created_at)`,
			`CREATE TABLE IF NOT EXISTS rsc_effects (
				seq        BIGSERIAL PRIMARY KEY,
				event      TEXT NOT NULL,
				object     TEXT NOT NULL,
				version    BIGINT NOT NULL,
				created_at BIGINT NOT NULL
			)`,
			`CREATE INDEX IF NOT EXISTS rsc_effects_by_event ON rsc_effects (event, seq)`,
			`CREATE INDEX IF NOT EXISTS rsc_effects_by_object ON rsc_effects (object, seq)`,
			`CREATE TABLE IF NOT EXISTS rsc_objects (
				object     TEXT PRIMARY KEY,
				version    BIGINT NOT NULL,
				event      TEXT NOT NULL,
				updated_at BIGINT NOT NULL
			)`,
		},
	},
}

// latestVersion is the schema version this binary migrates to.
func latestVersion() int { return migrations[len(migrations)-1].version }

// migrate brings the schema up to the latest version in one transaction. Concurrent
// migrators are serialised: PostgreSQL takes a transaction-scoped advisory lock keyed by
// the current schema; SQLite's transaction is BEGIN IMMEDIATE (the DSN's _txlock). A schema
// that is already newer is left alone.
func migrate(ctx context.Context, db *sql.DB, d *dialect) error {
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
		if m.version > current {
			if err := applyMigration(ctx, tx, d, m); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// schemaVersion creates the version table if needed and returns the highest applied version.
func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	const create = `CREATE TABLE IF NOT EXISTS rsc_schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at BIGINT NOT NULL
	)`
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return 0, fmt.Errorf("migrate: create rsc_schema_version: %w", err)
	}
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM rsc_schema_version`).Scan(&v); err != nil {
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
	ins := d.rebind(`INSERT INTO rsc_schema_version (version, name, applied_at) VALUES (?, ?, ?)`)
	if _, err := tx.ExecContext(ctx, ins, m.version, m.name, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("migrate: record v%d: %w", m.version, err)
	}
	return nil
}
