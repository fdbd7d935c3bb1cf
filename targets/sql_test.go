package targets

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sqlBackends are the databases the SQL observer is tested against. The services must be running:
// a test that cannot reach one fails (it never skips).
var sqlBackends = []struct {
	driver     SQLDriver
	env, dflt  string
	what, hint string
}{
	{Postgres, "RETRYSAFE_PG_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL", "start PostgreSQL on 127.0.0.1:5432 (user postgres, database test, trust auth)"},
	{MySQL, "RETRYSAFE_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test", "MariaDB/MySQL", "start MariaDB on 127.0.0.1:3306 (user root, empty password, database test)"},
	{SQLite, "", "", "SQLite", ""},
}

func randomName(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "rs_obs_" + hex.EncodeToString(b)
}

// redactDSN hides a DSN's password in test messages.
func redactDSN(driver SQLDriver, dsn string) string {
	if pw := dsnPassword(driver, dsn); pw != "" {
		return strings.ReplaceAll(dsn, pw, "xxxxx")
	}
	return dsn
}

func TestSQLObserver(t *testing.T) {
	for _, be := range sqlBackends {
		t.Run(string(be.driver), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			dsn := be.dflt
			if v := os.Getenv(be.env); be.env != "" && v != "" {
				dsn = v
			}
			if be.driver == SQLite {
				dsn = filepath.Join(t.TempDir(), "observer.db")
			}
			admin, err := sql.Open(driverName(be.driver), dsn)
			if err != nil {
				t.Fatalf("%s: cannot open %s: %v", be.what, redactDSN(be.driver, dsn), err)
			}
			defer admin.Close()
			pingCtx, cancelPing := context.WithTimeout(ctx, 5*time.Second)
			defer cancelPing()
			if err := admin.PingContext(pingCtx); err != nil {
				t.Fatalf("%s is not reachable at %s: %v\n%s, or set %s to a reachable DSN", be.what, redactDSN(be.driver, dsn), err, be.hint, be.env)
			}
			table := randomName(t)
			exec := func(q string) {
				t.Helper()
				if _, err := admin.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %s: %v", be.what, q, err)
				}
			}
			exec(fmt.Sprintf("CREATE TABLE %s (id INTEGER NOT NULL, ref VARCHAR(64) NOT NULL, tenant VARCHAR(64) NOT NULL)", table))
			t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP TABLE "+table) })
			exec(fmt.Sprintf("INSERT INTO %s (id, ref, tenant) VALUES (1, 'run1-a', 'alice'), (2, 'run1-a', 'alice'), (3, 'run1-a', 'alice'), (4, 'run1-a', 'bob'), (5, 'run1-b', 'alice')", table))

			src := fmt.Sprintf(`instances: [http://127.0.0.1:1]
operations:
  - name: orders
    path: /v1/orders
    observer:
      sql:
        driver: %s
        dsn: "${DSN}"
        query: SELECT count(*) FROM %s WHERE ref = '{{.Ref}}' AND tenant = '{{.Tenant}}'
      bulk: {driver: %s, dsn: "${DSN}", query: "SELECT ref, count(*) FROM %s WHERE ref LIKE '{{.Prefix}}%%' GROUP BY ref"}
  - name: nulls
    path: /v1/nulls
    observer:
      sql: {driver: %s, dsn: "${DSN}", query: "SELECT max(id) FROM %s WHERE ref = '{{.Ref}}'"}
      bulk: {driver: %s, dsn: "${DSN}", query: "SELECT ref, id, tenant FROM %s WHERE ref LIKE '{{.Prefix}}%%'"}
  - name: ints
    path: /v1/ints
    observer:
      sql: {driver: %s, dsn: "${DSN}", query: "SELECT count(*) FROM %s WHERE ref = '{{.Ref}}'"}
      bulk: {driver: %s, dsn: "${DSN}", query: "SELECT ref, CAST(count(*) AS INTEGER) FROM %s WHERE ref LIKE '{{.Prefix}}%%' GROUP BY ref"}
tenants: [{name: alice}, {name: bob}]
cleanup:
  sql: {driver: %s, dsn: "${DSN}", query: "DELETE FROM %s WHERE ref LIKE '{{.Ref}}%%' AND tenant = '{{.Tenant}}'"}
`, be.driver, table, be.driver, table, be.driver, table, be.driver, table, be.driver, table, be.driver, table, be.driver, table)
			tg, probs := parseString(src, map[string]string{"DSN": dsn})
			if probs != nil {
				t.Fatal(strings.Join(probs, "\n"))
			}
			defer tg.Close()
			alice, bob := tg.Tenants[0], tg.Tenants[1]
			for _, c := range []struct {
				ref  string
				tn   *Tenant
				want int
			}{{"run1-a", alice, 3}, {"run1-a", bob, 1}, {"run1-b", alice, 1}, {"run1-c", alice, 0}} {
				n, err := tg.CountRecords(ctx, tg.Operations[0], c.tn, Vars{Ref: c.ref}, nil)
				if err != nil || n != c.want {
					t.Errorf("count(%s, %s) = %d, %v; want %d", c.ref, c.tn.Name, n, err, c.want)
				}
			}
			if len(tg.dbs) != 1 {
				t.Errorf("%d connection pools for one DSN", len(tg.dbs))
			}
			if _, err := tg.CountRecords(ctx, tg.Operations[1], alice, Vars{Ref: "none"}, nil); err == nil || !strings.Contains(err.Error(), "NULL") {
				t.Errorf("NULL result: %v", err)
			}
			bulk, err := tg.CountBulk(ctx, tg.Operations[0], "run1-")
			if err != nil || len(bulk) != 2 || bulk["run1-a"] != 4 || bulk["run1-b"] != 1 {
				t.Errorf("bulk count of run1-: %v, %v; want run1-a 4 and run1-b 1", bulk, err)
			}
			if bulk, err := tg.CountBulk(ctx, tg.Operations[0], "run2-"); err != nil || len(bulk) != 0 {
				t.Errorf("bulk count of run2-: %v, %v; want none", bulk, err)
			}
			// Counts of another integer type (scanned, not read off the wire on PostgreSQL).
			if bulk, err := tg.CountBulk(ctx, tg.Operations[2], "run1-"); err != nil || len(bulk) != 2 || bulk["run1-a"] != 4 || bulk["run1-b"] != 1 {
				t.Errorf("bulk count of run1- as integers: %v, %v; want run1-a 4 and run1-b 1", bulk, err)
			}
			if _, err := tg.CountBulk(ctx, tg.Operations[1], "run1-"); err == nil || !strings.Contains(err.Error(), "3 columns, want 2") {
				t.Errorf("a bulk query of 3 columns: %v", err)
			}
			if err := tg.RunCleanup(ctx, nil, "run1-"); err != nil {
				t.Fatal(err)
			}
			var left int
			if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&left); err != nil || left != 0 {
				t.Errorf("after cleanup %d rows left (%v)", left, err)
			}
			if err := tg.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

func TestSQLObserverBadQuery(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "bad.db")
	tg, probs := parseString(`instances: [http://127.0.0.1:1]
operations:
  - name: orders
    path: /v1/orders
    observer: {sql: {driver: sqlite, dsn: "`+dsn+`", query: "SELECT count(*) FROM no_such_table"}}
`, nil)
	if probs != nil {
		t.Fatal(probs)
	}
	defer tg.Close()
	_, err := tg.CountRecords(context.Background(), tg.Operations[0], nil, Vars{Ref: "r"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no_such_table") || !strings.Contains(err.Error(), "orders") {
		t.Errorf("error should name the operation and the failing query: %v", err)
	}
}

func TestSecretValuesFromDSNs(t *testing.T) {
	src := `instances: [http://127.0.0.1:1]
operations:
  - name: a
    path: /a
    headers: {X-Api-Key: static-api-key-123, X-Other: visible}
    observer: {sql: {driver: postgres, dsn: "postgres://u:pg-pass-word@127.0.0.1:5432/db", query: "select 1"}}
  - name: b
    path: /b
    observer: {sql: {driver: mysql, dsn: "u:my-pass-word@tcp(127.0.0.1:3306)/db", query: "select 1"}}
tenants:
  - name: alice
    headers: {Authorization: Bearer alice-token-0001, X-Tenant: alice}
    secrets: [alice-signing-secret]
secrets: [top-secret]
`
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatal(probs)
	}
	got := tg.SecretValues()
	for _, want := range []string{"pg-pass-word", "my-pass-word", "Bearer alice-token-0001", "alice-token-0001", "alice",
		"alice-signing-secret", "top-secret", "static-api-key-123"} {
		if !slices.Contains(got, want) {
			t.Errorf("SecretValues lacks %q: %v", want, got)
		}
	}
	if slices.Contains(got, "visible") {
		t.Errorf("non-secret header value listed: %v", got)
	}
	for i := 1; i < len(got); i++ {
		if len(got[i]) > len(got[i-1]) {
			t.Errorf("not longest first: %v", got)
		}
	}
}
