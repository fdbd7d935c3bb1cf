package reference

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// SQLStore is the Store on SQLite or PostgreSQL through database/sql. Every method is safe
// for concurrent use, also by several processes sharing one database.
type SQLStore struct {
	db *storekit.DB
}

var _ Store = (*SQLStore)(nil)

// OpenSQLite opens (creating if needed) the SQLite database file at path and migrates its
// schema to the latest version.
func OpenSQLite(ctx context.Context, path string) (*SQLStore, error) {
	db, err := storekit.OpenSQLite(ctx, path, schema)
	if err != nil {
		return nil, err
	}
	return &SQLStore{db: db}, nil
}

// OpenPostgres connects to PostgreSQL (a pgx URL or keyword/value DSN; a search_path
// parameter selects the schema) and migrates its schema to the latest version.
func OpenPostgres(ctx context.Context, dsn string) (*SQLStore, error) {
	db, err := storekit.OpenPostgres(ctx, dsn, schema)
	if err != nil {
		return nil, err
	}
	return &SQLStore{db: db}, nil
}

// Close closes the connection pool.
func (s *SQLStore) Close() error { return s.db.Close() }

// Claim implements Store: INSERT ... ON CONFLICT DO NOTHING RETURNING for a new key;
// otherwise read the row, apply Decide, and on a reset update it only if its token is
// unchanged (optimistic fencing), trying again when another claimer won
// (storekit.ClaimLoop).
func (s *SQLStore) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	return storekit.ClaimLoop(ctx, s.db, req.Scope, func(tx *sql.Tx) (ClaimResult, bool, error) {
		return s.claimOnce(ctx, tx, req)
	})
}

// claimOnce makes one claim attempt; done=false means it lost a race and must be retried.
func (s *SQLStore) claimOnce(ctx context.Context, tx *sql.Tx, req ClaimRequest) (ClaimResult, bool, error) {
	fresh := freshRow(req, nil)
	var token int64
	err := tx.QueryRowContext(ctx, s.db.Rebind(`INSERT INTO rs_keys
		(scope, fingerprint, state, token, created_at, locked_at, status, body)
		VALUES (?, ?, ?, ?, ?, ?, 0, NULL)
		ON CONFLICT (scope) DO NOTHING RETURNING token`),
		fresh.Scope, fresh.Fingerprint, string(fresh.State), fresh.Token,
		fresh.CreatedAt.UnixMicro(), fresh.LockedAt.UnixMicro()).Scan(&token)
	if err == nil {
		return ClaimResult{Outcome: Claimed, Token: token}, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return ClaimResult{}, false, err
	}
	row, err := s.lookup(ctx, tx, req.Scope)
	if err != nil || row == nil {
		return ClaimResult{}, false, err // deleted since the insert: try again
	}
	outcome, reset := Decide(row, req)
	if !reset {
		res := ClaimResult{Outcome: outcome}
		if outcome == Completed {
			res.Response = row.Response
		}
		return res, true, nil
	}
	next := freshRow(req, row)
	r, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE rs_keys
		SET fingerprint = ?, state = ?, token = ?, created_at = ?, locked_at = ?, status = 0, body = NULL
		WHERE scope = ? AND token = ?`),
		next.Fingerprint, string(next.State), next.Token, next.CreatedAt.UnixMicro(),
		next.LockedAt.UnixMicro(), req.Scope, row.Token)
	if err != nil {
		return ClaimResult{}, false, err
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return ClaimResult{}, false, err // fenced by a concurrent reset: try again
	}
	return ClaimResult{Outcome: Claimed, Token: next.Token}, true, nil
}

// Lookup implements Store.
func (s *SQLStore) Lookup(ctx context.Context, scope string) (*KeyRow, error) {
	row, err := s.lookup(ctx, s.db, scope)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	return row, nil
}

func (s *SQLStore) lookup(ctx context.Context, q storekit.Queryer, scope string) (*KeyRow, error) {
	var (
		row               KeyRow
		state             string
		created, lockedAt int64
	)
	err := q.QueryRowContext(ctx, s.db.Rebind(`SELECT scope, fingerprint, state, token,
		created_at, locked_at, status, body FROM rs_keys WHERE scope = ?`), scope).Scan(
		&row.Scope, &row.Fingerprint, &state, &row.Token, &created, &lockedAt,
		&row.Response.Status, &row.Response.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	row.State = State(state)
	row.CreatedAt = time.UnixMicro(created).UTC()
	row.LockedAt = time.UnixMicro(lockedAt).UTC()
	return &row, nil
}

// Complete implements Store. The key's completion and the record commit in one
// transaction, except with Split (two transactions, record first) and Force (no check).
func (s *SQLStore) Complete(ctx context.Context, c Completion) (bool, error) {
	var ok bool
	var err error
	switch {
	case c.Force:
		ok, err = true, s.db.InTx(ctx, func(tx *sql.Tx) (bool, error) { return true, s.forceComplete(ctx, tx, c) })
	case c.Split:
		ok, err = s.splitComplete(ctx, c)
	default:
		ok, err = s.atomicComplete(ctx, c)
	}
	if err != nil {
		return false, fmt.Errorf("complete: %w", err)
	}
	return ok, nil
}

// atomicComplete finishes the key and writes the record in one transaction; a fenced
// completion rolls back and writes nothing.
func (s *SQLStore) atomicComplete(ctx context.Context, c Completion) (bool, error) {
	return s.db.InTxOK(ctx, func(tx *sql.Tx) (bool, error) {
		if ok, err := s.finishKey(ctx, tx, c); !ok || err != nil {
			return ok, err
		}
		if err := s.insertJobOf(ctx, tx, c); err != nil || c.Record == nil {
			return err == nil, err
		}
		return true, s.insertRecordAndEvent(ctx, tx, c)
	})
}

// splitComplete is the split-write mutant: the record commits on its own, then the key.
func (s *SQLStore) splitComplete(ctx context.Context, c Completion) (bool, error) {
	if c.Record != nil {
		err := s.db.InTx(ctx, func(tx *sql.Tx) (bool, error) { return true, s.insertRecordAndEvent(ctx, tx, c) })
		if err != nil {
			return false, err
		}
	}
	return s.db.InTxOK(ctx, func(tx *sql.Tx) (bool, error) { return s.finishKey(ctx, tx, c) })
}

// finishKey marks the key done if it is still in progress with the completion's token.
func (s *SQLStore) finishKey(ctx context.Context, tx *sql.Tx, c Completion) (bool, error) {
	r, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE rs_keys SET state = ?, status = ?, body = ?
		WHERE scope = ? AND token = ? AND state = ?`),
		string(StateDone), c.Response.Status, nonNil(c.Response.Body), c.Scope, c.Token,
		string(StateInProgress))
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// forceComplete is the race mutant: insert the record and upsert the key as done.
func (s *SQLStore) forceComplete(ctx context.Context, tx *sql.Tx, c Completion) error {
	if c.Record != nil {
		if err := s.insertRecordAndEvent(ctx, tx, c); err != nil {
			return err
		}
	}
	now := c.Now.UnixMicro()
	_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO rs_keys
		(scope, fingerprint, state, token, created_at, locked_at, status, body)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (scope) DO UPDATE SET fingerprint = excluded.fingerprint,
			state = excluded.state, token = rs_keys.token + 1, created_at = excluded.created_at,
			locked_at = excluded.locked_at, status = excluded.status, body = excluded.body`),
		c.Scope, c.Fingerprint, string(StateDone), initialToken(c.Now), now, now,
		c.Response.Status, nonNil(c.Response.Body))
	return err
}

// Release implements Store.
func (s *SQLStore) Release(ctx context.Context, scope string, token int64) error {
	_, err := s.db.ExecTx(ctx, `DELETE FROM rs_keys WHERE scope = ? AND token = ? AND state = ?`,
		scope, token, string(StateInProgress))
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// AddRecord implements Store.
func (s *SQLStore) AddRecord(ctx context.Context, r Record) error {
	err := s.db.InTx(ctx, func(tx *sql.Tx) (bool, error) { return true, s.insertRecord(ctx, tx, r) })
	if err != nil {
		return fmt.Errorf("add record: %w", err)
	}
	return nil
}

func (s *SQLStore) insertRecord(ctx context.Context, tx *sql.Tx, r Record) error {
	_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO rs_records
		(id, tenant, kind, ref, amount, currency, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
		r.ID, r.Tenant, r.Kind, r.Ref, r.Amount, r.Currency, r.Created.UnixMicro())
	return err
}

// Records implements Store.
func (s *SQLStore) Records(ctx context.Context, tenant, kind, ref string) ([]Record, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(`SELECT id, tenant, kind, ref, amount,
		currency, created_at FROM rs_records WHERE tenant = ? AND kind = ? AND ref = ?
		ORDER BY `+recordOrder(s.db.Dialect)), tenant, kind, ref)
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var created int64
		if err := rows.Scan(&r.ID, &r.Tenant, &r.Kind, &r.Ref, &r.Amount, &r.Currency, &created); err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		r.Created = time.UnixMicro(created).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	return out, nil
}

// Prune implements Store.
func (s *SQLStore) Prune(ctx context.Context, createdBefore time.Time) (int, error) {
	n, err := s.db.ExecTx(ctx, `DELETE FROM rs_keys WHERE created_at < ?`, createdBefore.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	if _, err := s.db.ExecTx(ctx, `DELETE FROM rs_outbox WHERE sent_at IS NOT NULL AND created_at < ?`, createdBefore.UnixMicro()); err != nil {
		return int(n), fmt.Errorf("prune the outbox: %w", err)
	}
	return int(n), nil
}

// nonNil stores an empty body as an empty value rather than NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
