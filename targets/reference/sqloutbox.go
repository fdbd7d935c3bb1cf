package reference

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// The SQL store's outbox: table rs_outbox (migration v3), its rows written in the record's
// transaction.

// insertRecordAndEvent writes the completion's record and, in the same transaction, its event.
func (s *SQLStore) insertRecordAndEvent(ctx context.Context, tx *sql.Tx, c Completion) error {
	if err := s.insertRecord(ctx, tx, *c.Record); err != nil {
		return err
	}
	if c.Event == nil {
		return nil
	}
	return s.insertEvent(ctx, tx, *c.Event)
}

// insertEvent writes a pending event.
func (s *SQLStore) insertEvent(ctx context.Context, tx *sql.Tx, e OutboxEvent) error {
	_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO rs_outbox
		(id, type, tenant, record_id, ref, data, created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`),
		e.ID, e.Type, e.Tenant, e.RecordID, e.Ref, nonNil(e.Data), e.Created.UnixMicro())
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// AddEvent implements Outbox.
func (s *SQLStore) AddEvent(ctx context.Context, e OutboxEvent) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) (bool, error) { return true, s.insertEvent(ctx, tx, e) })
}

// PendingEvents implements Outbox.
func (s *SQLStore) PendingEvents(ctx context.Context, n int) ([]OutboxEvent, error) {
	order := "created_at, rowid"
	if s.db.Dialect == storekit.Postgres {
		order = "created_at, seq"
	}
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(`SELECT id, type, tenant, record_id, ref, data, created_at
		FROM rs_outbox WHERE sent_at IS NULL ORDER BY `+order+` LIMIT ?`), n)
	if err != nil {
		return nil, fmt.Errorf("pending events: %w", err)
	}
	defer rows.Close()
	var out []OutboxEvent
	for rows.Next() {
		var e OutboxEvent
		var created int64
		if err := rows.Scan(&e.ID, &e.Type, &e.Tenant, &e.RecordID, &e.Ref, &e.Data, &created); err != nil {
			return nil, fmt.Errorf("pending events: %w", err)
		}
		e.Created = time.UnixMicro(created).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending events: %w", err)
	}
	return out, nil
}

// MarkEventSent implements Outbox.
func (s *SQLStore) MarkEventSent(ctx context.Context, id string, at time.Time) error {
	if _, err := s.db.ExecTx(ctx, `UPDATE rs_outbox SET sent_at = ? WHERE id = ? AND sent_at IS NULL`, at.UnixMicro(), id); err != nil {
		return fmt.Errorf("mark event %s sent: %w", id, err)
	}
	return nil
}
