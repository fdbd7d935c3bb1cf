package consumer

import "github.com/retrysafe/retrysafe/targets/reference/internal/storekit"

// schema is the consumer's. Every table starts with rsc_, and the migration lock has its
// own key, so that the consumer can share a database (and a schema) with the reference API
// (rs_ tables).
var schema = storekit.Schema{
	VersionTable: "rsc_schema_version",
	LockKey:      "retrysafe.consumer.migrate.",
	Migrations:   migrations,
}

// migrations are applied in order; never edit a released one, append a new version.
var migrations = []storekit.Migration{
	{
		Version: 1,
		Name:    "events, effects and objects",
		SQLite: []string{
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
		Postgres: []string{
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
	{
		Version: 2,
		Name:    "the business operation of each effect",
		SQLite: []string{
			`ALTER TABLE rsc_effects ADD COLUMN operation TEXT NOT NULL DEFAULT ''`,
			`CREATE INDEX IF NOT EXISTS rsc_effects_by_operation ON rsc_effects (operation, seq)`,
		},
		Postgres: []string{
			`ALTER TABLE rsc_effects ADD COLUMN IF NOT EXISTS operation TEXT NOT NULL DEFAULT ''`,
			`CREATE INDEX IF NOT EXISTS rsc_effects_by_operation ON rsc_effects (operation, seq)`,
		},
	},
}
