package reference

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// The SQL store's jobs (jobs.go): table rs_jobs (migration v4), a job written in its key's
// transaction and finished in its record's.

var _ Jobs = (*SQLStore)(nil)

// insertJobOf writes the completion's job, if it has one.
func (s *SQLStore) insertJobOf(ctx context.Context, tx *sql.Tx, c Completion) error {
	if c.Job == nil {
		return nil
	}
	return s.insertJob(ctx, tx, *c.Job)
}

// insertJob writes a pending job.
func (s *SQLStore) insertJob(ctx context.Context, tx *sql.Tx, j Job) error {
	_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO rs_jobs
		(id, operation, tenant, kind, ref, idem_key, amount, currency, created_at, state, record_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '')`),
		j.ID, j.Operation, j.Tenant, j.Kind, j.Ref, j.Key, j.Amount, j.Currency, j.Created.UnixMicro(), string(JobPending))
	if err != nil {
		return fmt.Errorf("job: %w", err)
	}
	return nil
}

// AddJob implements Jobs.
func (s *SQLStore) AddJob(ctx context.Context, j Job) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) (bool, error) { return true, s.insertJob(ctx, tx, j) })
}

// jobColumns are the columns a Job is scanned from, in scanJob's order.
const jobColumns = `id, operation, tenant, kind, ref, idem_key, amount, currency, created_at, state, record_id`

// PendingJobs implements Jobs.
func (s *SQLStore) PendingJobs(ctx context.Context, n int) ([]Job, error) {
	order := "created_at, rowid"
	if s.db.Dialect == storekit.Postgres {
		order = "created_at, seq"
	}
	return s.jobs(ctx, `SELECT `+jobColumns+` FROM rs_jobs WHERE state = ? ORDER BY `+order+` LIMIT ?`, string(JobPending), n)
}

// OperationJobs implements Jobs.
func (s *SQLStore) OperationJobs(ctx context.Context, tenant, operation string) ([]Job, error) {
	order := "created_at, rowid"
	if s.db.Dialect == storekit.Postgres {
		order = "created_at, seq"
	}
	return s.jobs(ctx, `SELECT `+jobColumns+` FROM rs_jobs WHERE operation = ? AND tenant = ? ORDER BY `+order, operation, tenant)
}

// jobs runs a query of jobColumns.
func (s *SQLStore) jobs(ctx context.Context, query string, args ...any) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(query), args...)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var j Job
		var created int64
		var state string
		if err := rows.Scan(&j.ID, &j.Operation, &j.Tenant, &j.Kind, &j.Ref, &j.Key, &j.Amount, &j.Currency, &created, &state, &j.RecordID); err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		j.Created, j.State = time.UnixMicro(created).UTC(), JobState(state)
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return out, nil
}

// FinishJob implements Jobs: the job's state and its record commit together, and only while the
// job is pending.
func (s *SQLStore) FinishJob(ctx context.Context, id string, state JobState, rec *Record) (bool, error) {
	recordID := ""
	if rec != nil {
		recordID = rec.ID
	}
	ok, err := s.db.InTxOK(ctx, func(tx *sql.Tx) (bool, error) {
		r, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE rs_jobs SET state = ?, record_id = ? WHERE id = ? AND state = ?`),
			string(state), recordID, id, string(JobPending))
		if err != nil {
			return false, err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return false, err
		}
		if rec == nil {
			return true, nil
		}
		return true, s.insertRecord(ctx, tx, *rec)
	})
	if err != nil {
		return false, fmt.Errorf("finish job %s: %w", id, err)
	}
	return ok, nil
}
