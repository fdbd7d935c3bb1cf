package targets

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/retrysafe/retrysafe/targets/postgres"
)

// maxObserverBody caps what an HTTP observer reads from the target.
const maxObserverBody = 1 << 20

// defaultClient is used when CountRecords or RunCleanup get a nil client.
var defaultClient = &http.Client{Timeout: 10 * time.Second}

// CountRecords returns the number of business records the operation holds for vars.Ref, as the
// operation's observer sees it. An HTTP observer is asked on the first instance when the instances
// share a store, and on every instance (summed) when they do not; it is sent with the tenant's
// headers (nil tenant = none). An SQL observer is asked once. hc nil = a client with a 10 s timeout.
func (t *Target) CountRecords(ctx context.Context, op *Operation, tenant *Tenant, vars Vars, hc *http.Client) (int, error) {
	if op.Observer == nil {
		return 0, fmt.Errorf("operation %s declares no observer", op.Name)
	}
	if tenant != nil && vars.Tenant == "" {
		vars.Tenant = tenant.Name
	}
	return t.observe(ctx, op.Observer, tenant, vars, hc, "operation "+op.Name)
}

// Observe asks an observer that is not an operation's (a consumer's effects or state) with
// vars (EventVars), as CountRecords does: the number it reads.
func (t *Target) Observe(ctx context.Context, obs *Observer, vars any, hc *http.Client, what string) (int, error) {
	return t.observe(ctx, obs, nil, vars, hc, what)
}

// observe asks an observer (SQL once, HTTP on the first instance or summed over every instance).
func (t *Target) observe(ctx context.Context, obs *Observer, tenant *Tenant, vars any, hc *http.Client, what string) (int, error) {
	if q := obs.SQL; q != nil {
		n, err := t.sqlCount(ctx, q, vars)
		if err != nil {
			return 0, fmt.Errorf("%s: sql observer: %w", what, err)
		}
		return n, nil
	}
	if hc == nil {
		hc = defaultClient
	}
	if ctx == nil {
		ctx = context.Background()
	}
	insts := t.Instances
	if t.SharedStore && len(insts) > 1 {
		insts = insts[:1]
	}
	total := 0
	for i := range insts {
		n, err := obs.HTTP.count(ctx, &insts[i], tenant, vars, hc)
		if err != nil {
			return 0, fmt.Errorf("%s: observer on %s: %w", what, insts[i].URL.Redacted(), err)
		}
		total += n
	}
	return total, nil
}

// count asks one instance.
func (h *HTTPObserver) count(ctx context.Context, inst *Instance, tenant *Tenant, vars any, hc *http.Client) (int, error) {
	pq, err := h.req.pathQuery(vars)
	if err != nil {
		return 0, err
	}
	req, err := h.req.newRequest(ctx, inst, tenant, vars, pq, nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxObserverBody+1))
	if err != nil {
		return 0, fmt.Errorf("%s %s: reading the answer: %w", req.Method, req.URL.Path, err)
	}
	if len(body) > maxObserverBody {
		return 0, fmt.Errorf("%s %s: answer is larger than 1 MiB", req.Method, req.URL.Path)
	}
	if resp.StatusCode/100 != 2 {
		return 0, fmt.Errorf("%s %s answered %s: %s", req.Method, req.URL.Path, resp.Status, snippet(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return 0, fmt.Errorf("%s %s: answer is not JSON (%v): %s", req.Method, req.URL.Path, err, snippet(body))
	}
	return h.evaluate(doc, body)
}

// evaluate applies the JSONPath: a singular path must select one number (the count) or one array
// (its length); a non-singular path counts the nodes it selects.
func (h *HTTPObserver) evaluate(doc any, body []byte) (int, error) {
	nodes := h.path.Select(doc)
	if h.path.Query().Singular() == nil {
		return len(nodes), nil
	}
	if len(nodes) == 0 {
		return 0, fmt.Errorf("jsonpath %s selects nothing in %s", h.JSONPath, snippet(body))
	}
	switch v := nodes[0].(type) {
	case []any:
		return len(v), nil
	case json.Number:
		f, err := v.Float64()
		if err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return 0, fmt.Errorf("jsonpath %s selects %s, not a count", h.JSONPath, v)
		}
		return int(f), nil
	}
	return 0, fmt.Errorf("jsonpath %s selects %s, not a number or an array", h.JSONPath, clip(string(mustJSON(nodes[0]))))
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// snippet returns the start of a body, quoted, for error messages.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty body)"
	}
	return fmt.Sprintf("%q", clip(s))
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// driverName maps a declared driver to its database/sql name.
func driverName(d SQLDriver) string {
	switch d {
	case Postgres:
		return "pgx"
	case MySQL:
		return "mysql"
	}
	return "sqlite"
}

// db returns the cached connection pool for q's DSN.
func (t *Target) db(q *SQLQuery) (*sql.DB, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := string(q.Driver) + "\x00" + q.DSN
	if db, ok := t.dbs[key]; ok {
		return db, nil
	}
	open := func(dsn string) (*sql.DB, error) { return sql.Open(driverName(q.Driver), dsn) }
	if q.Driver == Postgres {
		open = func(dsn string) (*sql.DB, error) { return postgres.Open(dsn, 0) } // waits while the server is full
	}
	db, err := open(q.DSN)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	if t.dbs == nil {
		t.dbs = map[string]*sql.DB{}
	}
	t.dbs[key] = db
	return db, nil
}

// sqlCount runs a counting query.
func (t *Target) sqlCount(ctx context.Context, q *SQLQuery, vars any) (int, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	text, err := q.query.render(vars)
	if err != nil {
		return 0, fmt.Errorf("query: %w", err)
	}
	db, err := t.db(q)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", q.Driver, err)
	}
	var n sql.NullInt64
	if err := db.QueryRowContext(ctx, text).Scan(&n); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("query returned no row (it must return one integer): %s", text)
		}
		return 0, fmt.Errorf("%s: %w (query: %s)", q.Driver, err, text)
	}
	if !n.Valid {
		return 0, fmt.Errorf("query returned NULL; use count(*) or COALESCE(..., 0): %s", text)
	}
	return int(n.Int64), nil
}

// dsnPassword extracts the password of a DSN ("" when none or unparsable).
func dsnPassword(driver SQLDriver, dsn string) string {
	switch driver {
	case Postgres:
		if cfg, err := pgx.ParseConfig(dsn); err == nil {
			return cfg.Password
		}
	case MySQL:
		if cfg, err := mysql.ParseDSN(dsn); err == nil {
			return cfg.Passwd
		}
	}
	return ""
}

// CountBulk asks an operation's bulk observer for the records of every ref that starts with
// prefix, in one query: the count of each ref it returns (a ref it does not return has none).
func (t *Target) CountBulk(ctx context.Context, op *Operation, prefix string) (map[string]int, error) {
	counts := map[string]int{}
	err := t.CountBulkEach(ctx, op, prefix, func(ref []byte, n int) { counts[string(ref)] += n })
	if err != nil {
		return nil, err
	}
	return counts, nil
}

// CountBulkEach is CountBulk streamed: each row's ref (valid only during the call) and count go
// to each as they arrive, a ref the query returns twice twice.
func (t *Target) CountBulkEach(ctx context.Context, op *Operation, prefix string, each func(ref []byte, n int)) error {
	q := op.Observer.Bulk
	if q == nil {
		return fmt.Errorf("operation %s declares no observer.bulk", op.Name)
	}
	text, err := q.query.render(BulkVars{Prefix: prefix})
	if err != nil {
		return fmt.Errorf("operation %s: bulk observer: query: %w", op.Name, err)
	}
	db, err := t.db(q)
	if err != nil {
		return fmt.Errorf("operation %s: bulk observer: %s: %w", op.Name, q.Driver, err)
	}
	if q.Driver == Postgres {
		conn, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("operation %s: bulk observer: %s: %w", op.Name, q.Driver, err)
		}
		defer conn.Close()
		return conn.Raw(func(dc any) error {
			return pgBulk(ctx, dc.(*stdlib.Conn).Conn(), op.Name, text, each)
		})
	}
	rows, err := db.QueryContext(ctx, text)
	if err != nil {
		return fmt.Errorf("operation %s: bulk observer: %s: %w (query: %s)", op.Name, q.Driver, err, text)
	}
	defer rows.Close()
	if cols, err := rows.Columns(); err == nil && len(cols) != 2 {
		return fmt.Errorf("operation %s: bulk observer: the query returns %d columns, want 2 (ref, count): %s", op.Name, len(cols), text)
	}
	var ref sql.RawBytes
	var n sql.NullInt64
	for rows.Next() {
		if err := rows.Scan(&ref, &n); err != nil {
			return fmt.Errorf("operation %s: bulk observer: %w (rows must be ref, count)", op.Name, err)
		}
		each(ref, int(n.Int64))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("operation %s: bulk observer: %w", op.Name, err)
	}
	return nil
}

// pgBulk runs a bulk query on PostgreSQL's own protocol: each row's ref and count read from the
// wire without a copy where their types allow (text and a binary or text integer), else scanned.
func pgBulk(ctx context.Context, c *pgx.Conn, name, text string, each func(ref []byte, n int)) error {
	rows, err := c.Query(ctx, text)
	if err != nil {
		return fmt.Errorf("operation %s: bulk observer: postgres: %w (query: %s)", name, err, text)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	if len(fds) != 2 {
		return fmt.Errorf("operation %s: bulk observer: the query returns %d columns, want 2 (ref, count): %s", name, len(fds), text)
	}
	raw := fds[1].Format == pgx.BinaryFormatCode && fds[1].DataTypeOID == pgtype.Int8OID &&
		(fds[0].DataTypeOID == pgtype.TextOID || fds[0].DataTypeOID == pgtype.VarcharOID)
	var ref []byte
	var n pgtype.Int8
	for rows.Next() {
		if v := rows.RawValues(); raw && len(v[1]) == 8 {
			each(v[0], int(int64(binary.BigEndian.Uint64(v[1]))))
			continue
		}
		if err := rows.Scan(&ref, &n); err != nil {
			return fmt.Errorf("operation %s: bulk observer: %w (rows must be ref, count)", name, err)
		}
		each(ref, int(n.Int64))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("operation %s: bulk observer: %w", name, err)
	}
	return nil
}
