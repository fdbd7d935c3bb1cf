package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Complete implements Store: in one transaction, mark the event done (fenced by the
// token, or upserted with Force, or skipped without a Key), insert the effect row and move
// the object's state forward.
func (s *SQLStore) Complete(ctx context.Context, c Completion) (bool, error) {
	ok, err := s.db.InTxOK(ctx, func(tx *sql.Tx) (bool, error) {
		if ok, err := s.finishEvent(ctx, tx, c); !ok || err != nil {
			return false, err
		}
		return true, s.applyEffect(ctx, tx, c)
	})
	if err != nil {
		return false, fmt.Errorf("complete: %w", err)
	}
	return ok, nil
}

// finishEvent marks the dedupe record done as the completion says; false means fenced.
func (s *SQLStore) finishEvent(ctx context.Context, tx *sql.Tx, c Completion) (bool, error) {
	switch {
	case c.Key == "":
		return true, nil
	case c.Force:
		now := storeTime(c.Now).UnixMicro()
		_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO rsc_events
			(dedupe_key, state, token, created_at, locked_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (dedupe_key) DO UPDATE SET state = excluded.state,
				token = rsc_events.token + 1, created_at = excluded.created_at,
				locked_at = excluded.locked_at`),
			c.Key, string(EventDone), initialToken(c.Now), now, now)
		return err == nil, err
	}
	return s.markDone(ctx, tx, c.Key, c.Token)
}

// markDone marks the record done if it is in progress with token.
func (s *SQLStore) markDone(ctx context.Context, tx *sql.Tx, key string, token int64) (bool, error) {
	r, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE rsc_events SET state = ?
		WHERE dedupe_key = ? AND token = ? AND state = ?`),
		string(EventDone), key, token, string(EventInProgress))
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// applyEffect inserts the effect row and sets the object's version, only forward unless
// OrderBlind.
func (s *SQLStore) applyEffect(ctx context.Context, tx *sql.Tx, c Completion) error {
	e := c.Effect
	created := storeTime(e.Created).UnixMicro()
	if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO rsc_effects
		(event, object, version, created_at, operation) VALUES (?, ?, ?, ?, ?)`),
		e.Event, e.Object, e.Version, created, e.Operation); err != nil {
		return err
	}
	upsert := `INSERT INTO rsc_objects (object, version, event, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (object) DO UPDATE SET version = excluded.version, event = excluded.event,
			updated_at = excluded.updated_at`
	if !c.OrderBlind {
		upsert += ` WHERE rsc_objects.version < excluded.version`
	}
	_, err := tx.ExecContext(ctx, s.db.Rebind(upsert), e.Object, e.Version, e.Event, storeTime(c.Now).UnixMicro())
	return err
}

// MarkDone implements Store.
func (s *SQLStore) MarkDone(ctx context.Context, key string, token int64) (bool, error) {
	ok, err := s.db.InTxOK(ctx, func(tx *sql.Tx) (bool, error) { return s.markDone(ctx, tx, key, token) })
	if err != nil {
		return false, fmt.Errorf("mark done: %w", err)
	}
	return ok, nil
}

// Release implements Store.
func (s *SQLStore) Release(ctx context.Context, key string, token int64) error {
	_, err := s.db.ExecTx(ctx, `DELETE FROM rsc_events WHERE dedupe_key = ? AND token = ? AND state = ?`,
		key, token, string(EventInProgress))
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// Effects implements Store.
func (s *SQLStore) Effects(ctx context.Context, f EffectFilter) ([]Effect, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(`SELECT event, object, version, created_at, operation
		FROM rsc_effects WHERE (? = '' OR event = ?) AND (? = '' OR object = ?) AND (? = '' OR operation = ?) ORDER BY seq`),
		f.Event, f.Event, f.Object, f.Object, f.Operation, f.Operation)
	if err != nil {
		return nil, fmt.Errorf("effects: %w", err)
	}
	defer rows.Close()
	var out []Effect
	for rows.Next() {
		var e Effect
		var created int64
		if err := rows.Scan(&e.Event, &e.Object, &e.Version, &created, &e.Operation); err != nil {
			return nil, fmt.Errorf("effects: %w", err)
		}
		e.Created = time.UnixMicro(created).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("effects: %w", err)
	}
	return out, nil
}

// ObjectVersion implements Store.
func (s *SQLStore) ObjectVersion(ctx context.Context, object string) (int64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT version FROM rsc_objects WHERE object = ?`), object).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("object version: %w", err)
	}
	return v, nil
}
