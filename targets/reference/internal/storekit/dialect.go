package storekit

import (
	"strconv"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// Dialect holds what differs between SQLite and PostgreSQL for the plumbing. Queries are
// written with "?" placeholders and rebound (Rebind) for PostgreSQL.
type Dialect struct {
	// Name is "sqlite" or "postgres", as errors and Migration name it.
	Name     string
	driver   string // the database/sql driver
	numbered bool   // placeholders are $1, $2, ...
	// gated: this process's write transactions queue in Go (see DB.InTx).
	gated bool
}

// The two SQL dialects.
var (
	SQLite   = &Dialect{Name: "sqlite", driver: "sqlite", gated: true}
	Postgres = &Dialect{Name: "postgres", driver: "pgx", numbered: true}
)

// Rebind turns "?" placeholders into the dialect's form.
func (d *Dialect) Rebind(q string) string {
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

// migrationLock is the statement run first in the migration transaction: on PostgreSQL a
// transaction-scoped advisory lock named key plus the current schema; none on SQLite,
// whose transaction is BEGIN IMMEDIATE (SQLiteDSN's _txlock) and so holds the database's
// write lock from the start.
func (d *Dialect) migrationLock(key string) string {
	if d != Postgres {
		return ""
	}
	lit := "'" + strings.ReplaceAll(key, "'", "''") + "'"
	return `SELECT pg_advisory_xact_lock(hashtext(` + lit + ` || COALESCE(current_schema(), '')))`
}
