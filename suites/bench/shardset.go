package bench

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the records of a synthetic set
)

// ShardSetRun is the run id of a synthetic shard set.
const ShardSetRun = "bench"

// shardSetTarget is the target file of a synthetic set: one operation whose records a bulk
// observer counts, as the API would have left them, in records.db next to the file or in a
// PostgreSQL table (%s is the bulk observer).
const shardSetTarget = `# A synthetic shard set's target (retrysafe bench --write-shard-set): its records are in
# one table, one per operation, counted by one bulk query.
name: synthetic
instances: ["${RETRYSAFE_URL:-http://127.0.0.1:8080}"]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    observer:
      http: {path: /v1/orders, query: "ref={{.Ref}}", jsonpath: $.count}
      bulk: %s
tenants:
  - {name: alice, headers: {Authorization: Bearer alice}}
profile: {base: ietf}
`

// shardSetRate is the per-shard rate the synthetic set's timestamps follow.
const shardSetRate = 5000

// ShardSet describes a written synthetic set.
type ShardSet struct {
	Dir, Target          string
	Shards               int
	Attempts, Operations int64
	// Store says where the records are: "sqlite (records.db)" or "postgresql table NAME".
	Store string
	drop  func() error
}

// Close drops the set's PostgreSQL table, if it has one (the files stay).
func (s *ShardSet) Close() error {
	if s.drop == nil {
		return nil
	}
	return s.drop()
}

// ShardSetOptions says where a synthetic set's records go: PostgresDSN "" is records.db
// (SQLite) in the set's folder, else a new table in that PostgreSQL database, counted there.
type ShardSetOptions struct {
	PostgresDSN string
}

// WriteShardSet writes into dir a synthetic set of n shard files of one run, about attempts
// attempts in all, made from the load plan (fresh operations, concurrent pairs, retries and
// cross-shard twins in the load property's mix) as a correct API answers them: each operation
// 201 with one body, every later attempt the same 201 replay or a 409 while in flight; with
// target.yaml and records.db (one record per operation).
func WriteShardSet(ctx context.Context, dir string, n int, attempts int64, o ShardSetOptions) (set *ShardSet, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rec, err := openRecords(ctx, dir, o.PostgresDSN)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := rec.close(); err == nil {
			err = cerr
		}
		if err != nil {
			rec.drop()
			set = nil
		}
	}()
	target := fmt.Sprintf(shardSetTarget, rec.bulk)
	targetPath := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(targetPath, []byte(target), 0o644); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(target))
	plan := framework.LoadPlan{Seed: 1, Shards: n, Rate: shardSetRate, Retry: framework.DefaultLoadRetryFraction, Twins: 0.1,
		Ops: 1, Tenants: 1, Instances: 1, Base: int64(framework.ShardSeqBase) * int64(n)}
	// Rounds per shard for the attempts asked, from the mix of the plan's first rounds.
	sample := int64(0)
	for k := range int64(2000) {
		sample += int64(len(roundAttempts(&plan, 0, k)))
	}
	rounds := max(1, attempts*2000/(sample*int64(n)))
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	set = &ShardSet{Dir: dir, Target: targetPath, Shards: n, Store: rec.store, drop: rec.drop}
	refPrefix := "rs-" + ShardSetRun + "-"
	for i := range n {
		// The operation table first: every operation the shard sends, in order.
		index := map[int64]int{}
		var ops []shardfile.Operation
		for k := range rounds {
			for _, sa := range roundAttempts(&plan, i, k) {
				if _, ok := index[sa.seq]; !ok {
					index[sa.seq] = len(ops)
					ops = append(ops, shardfile.Operation{Index: len(ops), Def: "orders", Ref: refPrefix + strconv.FormatInt(sa.seq, 10),
						Key: "rs-" + ShardSetRun + "-" + strconv.FormatInt(sa.seq, 10), Tenant: "alice", Owner: int(sa.seq % int64(n))})
				}
			}
		}
		if err := rec.insert(ctx, ops, i); err != nil {
			return nil, fmt.Errorf("the records of shard %d: %w", i, err)
		}
		var seq int64
		stream := func(yield func(shardfile.Attempt) bool) {
			for k := range rounds {
				due := t0.Add(time.Duration(k) * time.Second / shardSetRate)
				for j, sa := range roundAttempts(&plan, i, k) {
					seq++
					body := fmt.Appendf(nil, `{"id":"ord_%d","ref":"%s%d","amount":1000,"currency":"eur","status":"created"}`, sa.seq, refPrefix, sa.seq)
					status := 201
					if sa.inFlight {
						status, body = 409, []byte(`{"type":"about:blank","title":"request in progress","status":409}`)
					}
					start := due.Add(time.Duration(i*7+j) * time.Microsecond)
					a := shardfile.Attempt{Seq: seq, Op: index[sa.seq], Start: start, End: start.Add(1500 * time.Microsecond),
						Status: status, Outcome: history.OK, BodyHash: sha256.Sum256(body), Body: body}
					if !yield(a) {
						return
					}
				}
			}
		}
		end := t0.Add(time.Duration(rounds)*time.Second/shardSetRate + 2*time.Millisecond)
		m := shardfile.Manifest{Run: ShardSetRun, Shard: i, Shards: n, Seed: plan.Seed, TargetSHA256: hex.EncodeToString(sum[:]),
			PlannedStart: t0, PlannedEnd: t0.Add(time.Duration(rounds) * time.Second / shardSetRate), Start: t0, End: end,
			Rate: shardSetRate, Planned: rounds, Hits: rounds, Operations: len(ops), Complete: true, Limits: framework.LocalLimits,
			Figures: map[string]string{"synthetic": "retrysafe bench --write-shard-set"}}
		_, err := shardfile.Write(dir, shardfile.Header{Run: ShardSetRun, Shard: i, Shards: n, Instances: []string{"127.0.0.1:8080"}},
			ops, iter.Seq[shardfile.Attempt](stream), nil, &m)
		if err != nil {
			return nil, err
		}
		set.Attempts += m.Attempts
		for _, op := range ops {
			if op.Owner == i {
				set.Operations++
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if err := rec.index(ctx); err != nil {
		return nil, fmt.Errorf("indexing the records: %w", err)
	}
	return set, nil
}

// synthAttempt is one attempt a synthetic shard sends: its operation and whether it finds the
// operation in flight.
type synthAttempt struct {
	seq      int64
	inFlight bool
}

// roundAttempts are the attempts shard i sends at round k of the plan: its own hit (a pair twice,
// the second in flight half of the time) and the cross-shard twin of the previous shard's hit.
func roundAttempts(p *framework.LoadPlan, i int, k int64) []synthAttempt {
	own, twin := p.ShardHits(i, k)
	out := []synthAttempt{{seq: own.Seq}}
	if own.Kind == framework.HitPair {
		out = append(out, synthAttempt{seq: own.Seq, inFlight: own.Seq%2 == 0})
	}
	if twin != nil {
		out = append(out, synthAttempt{seq: twin.Seq, inFlight: twin.Seq%3 == 0})
	}
	return out
}

// records is where a synthetic set's records go.
type records struct {
	bulk, store string // the bulk observer; where, in words
	insert      func(ctx context.Context, ops []shardfile.Operation, shard int) error
	index       func(ctx context.Context) error
	close, drop func() error
}

// openRecords opens the records of a set in dir: records.db, or a new table in PostgreSQL.
func openRecords(ctx context.Context, dir, pgDSN string) (*records, error) {
	if pgDSN != "" {
		return openPostgresRecords(ctx, pgDSN)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "records.db"))
	if err != nil {
		return nil, err
	}
	for _, q := range []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF", "DROP TABLE IF EXISTS rs_records",
		"CREATE TABLE rs_records (id INTEGER PRIMARY KEY, ref TEXT NOT NULL)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, err
		}
	}
	return &records{
		bulk:  `{driver: sqlite, dsn: records.db, query: "SELECT ref, count(*) FROM rs_records WHERE ref GLOB '{{.Prefix}}*' GROUP BY ref"}`,
		store: "sqlite (records.db)",
		insert: func(ctx context.Context, ops []shardfile.Operation, shard int) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			st, err := tx.PrepareContext(ctx, "INSERT INTO rs_records (ref) VALUES (?)")
			if err != nil {
				return err
			}
			for _, op := range ops {
				if op.Owner != shard {
					continue
				}
				if _, err := st.ExecContext(ctx, op.Ref); err != nil {
					return err
				}
			}
			return tx.Commit()
		},
		index: func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, "CREATE INDEX rs_records_ref ON rs_records (ref)")
			return err
		},
		close: db.Close,
		drop:  func() error { return nil },
	}, nil
}

// openPostgresRecords creates a table of its own in PostgreSQL, filled with COPY.
func openPostgresRecords(ctx context.Context, dsn string) (*records, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", dsn, err)
	}
	table := fmt.Sprintf("rs_bench_records_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if _, err := conn.Exec(ctx, "CREATE UNLOGGED TABLE "+table+" (id bigserial PRIMARY KEY, ref text NOT NULL)"); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	drop := func() error {
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		_, err = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
		return err
	}
	// The C collation lets the index answer the prefix and hand the refs over in order, so that
	// PostgreSQL counts them in one pass over the index, without a sort or a hash table.
	q := fmt.Sprintf(`SELECT ref COLLATE "C", count(*) FROM %s WHERE ref COLLATE "C" LIKE '{{.Prefix}}%%' GROUP BY 1`, table)
	return &records{
		bulk:  fmt.Sprintf("{driver: postgres, dsn: %q, query: %q}", dsn, q),
		store: "postgresql table " + table,
		insert: func(ctx context.Context, ops []shardfile.Operation, shard int) error {
			i := 0
			_, err := conn.CopyFrom(ctx, pgx.Identifier{table}, []string{"ref"}, pgx.CopyFromFunc(func() ([]any, error) {
				for ; i < len(ops); i++ {
					if ops[i].Owner == shard {
						i++
						return []any{ops[i-1].Ref}, nil
					}
				}
				return nil, nil
			}))
			return err
		},
		index: func(ctx context.Context) error {
			if _, err := conn.Exec(ctx, "CREATE INDEX ON "+table+` (ref COLLATE "C")`); err != nil {
				return err
			}
			if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+table); err != nil {
				return err
			}
			_, _ = conn.Exec(ctx, "CHECKPOINT") // settled before a merge is timed; a role that may not is no error
			return nil
		},
		close: func() error { return conn.Close(context.Background()) },
		drop:  drop,
	}, nil
}
