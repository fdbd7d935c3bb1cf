package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
)

// SQLDriver names a database driver of an SQL observer or cleanup.
type SQLDriver string

const (
	// Postgres uses github.com/jackc/pgx/v5/stdlib.
	Postgres SQLDriver = "postgres"
	// MySQL uses github.com/go-sql-driver/mysql (also for MariaDB).
	MySQL SQLDriver = "mysql"
	// SQLite uses modernc.org/sqlite.
	SQLite SQLDriver = "sqlite"
)

// SQLQuery is a query (template) run against a database.
type SQLQuery struct {
	Driver SQLDriver
	DSN    string
	Query  string

	query *tmpl
}

// Cleanup is the request or query run at the end of a run, once per tenant, with .Ref set to the
// run's ref prefix. Exactly one of an HTTP request (Path set) and SQL is declared.
type Cleanup struct {
	Method     string
	Path       string
	Query      string
	Headers    map[string]string
	Body       string
	BodyFormat BodyFormat
	SQL        *SQLQuery

	req request
}

// sqlQuery decodes {driver, dsn, query}.
func (d *decoder) sqlQuery(o *object, name string) *SQLQuery {
	return d.sqlQueryWith(o, name, requestFields)
}

// sqlQueryWith is sqlQuery with the placeholders its query may use.
func (d *decoder) sqlQueryWith(o *object, name string, fields []string) *SQLQuery {
	so, ok := d.child(o, name)
	if !ok {
		return nil
	}
	q := &SQLQuery{}
	if s, ok := d.required(so, "driver", " (postgres, mysql or sqlite)"); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "postgres", "postgresql", "pgx":
			q.Driver = Postgres
		case "mysql", "mariadb":
			q.Driver = MySQL
		case "sqlite", "sqlite3":
			q.Driver = SQLite
		default:
			d.ps.add(so.lineOf("driver"), so.at("driver"), "unknown driver %q (known: postgres, mysql, sqlite)", s)
		}
	}
	if s, ok := d.required(so, "dsn", ""); ok {
		q.DSN = strings.TrimSpace(s)
		if q.Driver == SQLite && !strings.HasPrefix(q.DSN, "file:") && !strings.HasPrefix(q.DSN, ":memory:") && !filepath.IsAbs(q.DSN) {
			q.DSN = d.rel(q.DSN)
		}
	}
	if _, ok := d.required(so, "query", " (a SELECT returning one integer)"); ok {
		q.query, _ = d.tmplField(so, "query", fields)
		q.Query = srcOf(q.query)
	}
	if q.Driver == "" || q.DSN == "" || q.query == nil {
		return nil
	}
	return q
}

// cleanup decodes the optional cleanup block.
func (d *decoder) cleanup(top *object) *Cleanup {
	if !top.has("cleanup") {
		return nil
	}
	o, ok := d.child(top, "cleanup")
	if !ok {
		return nil
	}
	c := &Cleanup{}
	if o.has("sql") {
		for _, f := range []string{"method", "path", "query", "headers", "body", "body_format"} {
			if o.has(f) {
				d.ps.add(o.lineOf(f), o.at(f), "cleanup is either an HTTP request or sql, not both")
			}
		}
		c.SQL = d.sqlQuery(o, "sql")
		return c
	}
	if !o.has("path") {
		d.ps.add(o.line, "cleanup", "needs path (an HTTP request) or sql (a query)")
		return nil
	}
	d.request(o, &c.req, "DELETE")
	c.Method, c.Path, c.Query, c.Headers = c.req.method, srcOf(c.req.path), srcOf(c.req.query), headerMap(c.req.headers)
	c.Body, c.BodyFormat = srcOf(c.req.body), c.req.format
	return c
}

// RunCleanup runs the cleanup request or query once per tenant (once without headers when there are
// none), with vars.Ref set to runRef, the prefix of every {{.Ref}} of the run. HTTP cleanups go to
// the first instance when the store is shared, to every instance otherwise, and must answer 2xx or
// 404. A target without cleanup does nothing.
func (t *Target) RunCleanup(ctx context.Context, hc *http.Client, runRef string) error {
	c := t.Cleanup
	if c == nil {
		return nil
	}
	if hc == nil {
		hc = defaultClient
	}
	if ctx == nil {
		ctx = context.Background()
	}
	tenants := t.Tenants
	if len(tenants) == 0 {
		tenants = []*Tenant{nil}
	}
	done := map[string]bool{}
	var errs []error
	for _, tn := range tenants {
		vars := Vars{Ref: runRef}
		if tn != nil {
			vars.Tenant = tn.Name
		}
		if c.SQL != nil {
			text, err := c.SQL.query.render(vars)
			if err != nil || done[text] {
				errs = append(errs, err)
				continue
			}
			done[text] = true
			if db, err := t.db(c.SQL); err != nil {
				errs = append(errs, err)
			} else if _, err := db.ExecContext(ctx, text); err != nil {
				errs = append(errs, fmt.Errorf("cleanup query: %w", err))
			}
			continue
		}
		insts := t.Instances
		if t.SharedStore && len(insts) > 1 {
			insts = insts[:1]
		}
		for i := range insts {
			errs = append(errs, c.send(ctx, &insts[i], tn, vars, hc))
		}
	}
	return errors.Join(errs...)
}

func (c *Cleanup) send(ctx context.Context, inst *Instance, tn *Tenant, vars Vars, hc *http.Client) error {
	req, _, err := c.req.render(ctx, inst, tn, vars)
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("cleanup %s %s answered %s: %s", req.Method, req.URL.Path, resp.Status, snippet(msg))
	}
	return nil
}
