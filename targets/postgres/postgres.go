// Package postgres opens connections to PostgreSQL that wait while the server is full: many
// processes share one server (the reference API's stores, the harness's observers, a self-test's
// cells, go test beside them), and its max_connections (100 by default) answers a peak with
// "sorry, too many clients already" (SQLSTATE 53300), which is nobody's bug. A connection that
// meets it tries again, for up to ServerFullWait, as a pool waits for a free connection.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// ServerFullWait is how long a new connection waits, retrying, while the server answers "too
// many clients already": the other clients on it free theirs.
const ServerFullWait = 15 * time.Second

// Open opens a database/sql pool on dsn (a pgx URL or keyword/value DSN) whose new connections
// wait while the server is full, holding at most maxOpen connections (0: no bound).
func Open(dsn string, maxOpen int) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(waitingConnector{stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(maxOpen)
	return db, nil
}

// Connect opens one pgx connection on dsn, waiting while the server is full.
func Connect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	var conn *pgx.Conn
	err := whileFull(ctx, func() (err error) {
		conn, err = pgx.Connect(ctx, dsn)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return conn, nil
}

// waitingConnector connects through its connector, and while PostgreSQL refuses for want of a
// free connection slot, tries again (whileFull).
type waitingConnector struct{ driver.Connector }

func (w waitingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var c driver.Conn
	err := whileFull(ctx, func() (err error) {
		c, err = w.Connector.Connect(ctx)
		return err
	})
	return c, err
}

// whileFull calls connect until it does not fail with the server full, for up to ServerFullWait
// (or until ctx ends), backing off from 10 ms to half a second; it returns connect's last error.
func whileFull(ctx context.Context, connect func() error) error {
	deadline := time.Now().Add(ServerFullWait)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		err := connect()
		if err == nil || !serverFull(err) || time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// serverFull reports PostgreSQL's "sorry, too many clients already".
func serverFull(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "53300"
}
