package reference

import "github.com/retrysafe/retrysafe/targets/reference/internal/storekit"

// recordOrder is the ORDER BY clause of Records: oldest first, then insertion order
// (SQLite's implicit rowid; PostgreSQL's seq column, added by v2).
func recordOrder(d *storekit.Dialect) string {
	if d == storekit.Postgres {
		return "created_at, seq"
	}
	return "created_at, rowid"
}

// schema is the reference API's: tables rs_keys and rs_records, versions in
// rs_schema_version.
var schema = storekit.Schema{
	VersionTable: "rs_schema_version",
	LockKey:      "retrysafe.migrate.",
	Migrations:   migrations,
}

// migrations are applied in order; never edit a released one, append a new version.
var migrations = []storekit.Migration{
	{
		Version: 1,
		Name:    "keys and records",
		SQLite: []string{
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
		Postgres: []string{
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
		Version: 2,
		Name:    "record order and indexes",
		SQLite: []string{
			`CREATE INDEX IF NOT EXISTS rs_records_by_ref ON rs_records (tenant, kind, ref, created_at)`,
			`CREATE INDEX IF NOT EXISTS rs_keys_by_created ON rs_keys (created_at)`,
		},
		Postgres: []string{
			`ALTER TABLE rs_records ADD COLUMN IF NOT EXISTS seq BIGSERIAL`,
			`CREATE INDEX IF NOT EXISTS rs_records_by_ref ON rs_records (tenant, kind, ref, created_at, seq)`,
			`CREATE INDEX IF NOT EXISTS rs_keys_by_created ON rs_keys (created_at)`,
		},
	},
	{
		// v3: the outbox: each order's event, written in its record's transaction, pending
		// until the relay marks it sent.
		Version: 3,
		Name:    "outbox",
		SQLite: []string{
			`CREATE TABLE IF NOT EXISTS rs_outbox (
				id         TEXT PRIMARY KEY,
				type       TEXT NOT NULL,
				tenant     TEXT NOT NULL,
				record_id  TEXT NOT NULL,
				ref        TEXT NOT NULL,
				data       BLOB NOT NULL,
				created_at INTEGER NOT NULL,
				sent_at    INTEGER
			)`,
			`CREATE INDEX IF NOT EXISTS rs_outbox_pending ON rs_outbox (created_at) WHERE sent_at IS NULL`,
		},
		Postgres: []string{
			`CREATE TABLE IF NOT EXISTS rs_outbox (
				id         TEXT PRIMARY KEY,
				type       TEXT NOT NULL,
				tenant     TEXT NOT NULL,
				record_id  TEXT NOT NULL,
				ref        TEXT NOT NULL,
				data       BYTEA NOT NULL,
				created_at BIGINT NOT NULL,
				sent_at    BIGINT,
				seq        BIGSERIAL
			)`,
			`CREATE INDEX IF NOT EXISTS rs_outbox_pending ON rs_outbox (created_at, seq) WHERE sent_at IS NULL`,
		},
	},
	{
		// v4: the asynchronous operations' jobs (sqljobs.go): each written in its key's
		// transaction, pending until a worker writes its record.
		Version: 4,
		Name:    "jobs",
		SQLite: []string{
			`CREATE TABLE IF NOT EXISTS rs_jobs (
				id         TEXT PRIMARY KEY,
				operation  TEXT NOT NULL,
				tenant     TEXT NOT NULL,
				kind       TEXT NOT NULL,
				ref        TEXT NOT NULL,
				idem_key   TEXT NOT NULL,
				amount     INTEGER NOT NULL,
				currency   TEXT NOT NULL,
				created_at INTEGER NOT NULL,
				state      TEXT NOT NULL,
				record_id  TEXT NOT NULL DEFAULT ''
			)`,
			`CREATE INDEX IF NOT EXISTS rs_jobs_pending ON rs_jobs (created_at) WHERE state = 'pending'`,
			`CREATE INDEX IF NOT EXISTS rs_jobs_by_operation ON rs_jobs (operation)`,
		},
		Postgres: []string{
			`CREATE TABLE IF NOT EXISTS rs_jobs (
				id         TEXT PRIMARY KEY,
				operation  TEXT NOT NULL,
				tenant     TEXT NOT NULL,
				kind       TEXT NOT NULL,
				ref        TEXT NOT NULL,
				idem_key   TEXT NOT NULL,
				amount     BIGINT NOT NULL,
				currency   TEXT NOT NULL,
				created_at BIGINT NOT NULL,
				state      TEXT NOT NULL,
				record_id  TEXT NOT NULL DEFAULT '',
				seq        BIGSERIAL
			)`,
			`CREATE INDEX IF NOT EXISTS rs_jobs_pending ON rs_jobs (created_at, seq) WHERE state = 'pending'`,
			`CREATE INDEX IF NOT EXISTS rs_jobs_by_operation ON rs_jobs (operation)`,
		},
	},
}
