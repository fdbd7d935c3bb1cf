package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// SQLStore is the Store on SQLite or PostgreSQL through database/sql, in the tables
// rsc_events, rsc_effects, rsc_objects and rsc_schema_version. Every method is safe for
// concurrent use, also by several processes sharing one database.
type SQLStore struct {
	db *storekit.DB
}

var _ Store = (*SQLStore)(nil)

// OpenSQLite opens (creating if needed) the SQLite database file at path and migrates its
// schema.
func OpenSQLite(ctx context.Context, path string) (*SQLStore, error) {
	db, err := storekit.OpenSQLite(ctx, path, schema)
	if err != nil {
		return nil, err
	}
	return &SQLStore{db: db}, nil
}

// OpenPostgres connects to PostgreSQL (a pgx URL or keyword/value DSN; a search_path
// parameter selects the schema) and migrates its schema.
func OpenPostgres(ctx context.Context, dsn string) (*SQLStore, error) {
	db, err := storekit.OpenPostgres(ctx, dsn, schema)
	if err != nil {
		return nil, err
	}
	return &SQLStore{db: db}, nil
}

// Close closes the connection pool.
func (s *SQLStore) Close() error { return s.db.Close() }

// Claim implements Store: INSERT ... ON CONFLICT DO NOTHING RETURNING for a new event;
// otherwise read the record, apply Decide, and on a reset update it only if its token is
// unchanged (optimistic fencing), trying again when another claimer won
// (storekit.ClaimLoop).
func (s *SQLStore) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	return storekit.ClaimLoop(ctx, s.db, req.Key, func(tx *sql.Tx) (ClaimResult, bool, error) {
		return s.claimOnce(ctx, tx, req)
	})
}

// claimOnce makes one claim attempt; done=false means it lost a race and must be retried.
func (s *SQLStore) claimOnce(ctx context.Context, tx *sql.Tx, req ClaimRequest) (ClaimResult, bool, error) {
	fresh := freshRow(req, nil)
	var token int64
	err := tx.QueryRowContext(ctx, s.db.Rebind(`INSERT INTO rsc_events
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
	r, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE rsc_events
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

// Lookup implements Store.
func (s *SQLStore) Lookup(ctx context.Context, key string) (*EventRow, error) {
	row, err := s.lookup(ctx, s.db, key)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	return row, nil
}

func (s *SQLStore) lookup(ctx context.Context, q storekit.Queryer, key string) (*EventRow, error) {
	var (
		row               EventRow
		state             string
		created, lockedAt int64
	)
	err := q.QueryRowContext(ctx, s.db.Rebind(`SELECT dedupe_key, state, token, created_at, locked_at
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
	n, err := s.db.ExecTx(ctx, `DELETE FROM rsc_events WHERE created_at < ?`, storeTime(createdBefore).UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	return int(n), nil
}
