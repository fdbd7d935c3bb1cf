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

	_ "modernc.org/sqlite" // the records of a synthetic set
)

// ShardSetRun is the run id of a synthetic shard set.
const ShardSetRun = "bench"

// shardSetTarget is the target file of a synthetic set: one operation whose records a bulk
// observer counts in records.db, next to the file, as the API would have left them.
const shardSetTarget = `# A synthetic shard set's target (retrysafe bench --write-shard-set): its records are in
# records.db, one per operation, counted by one bulk query.
name: synthetic
instances: ["${RETRYSAFE_URL:-http://127.0.0.1:8080}"]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    observer:
      http: {path: /v1/orders, query: "ref={{.Ref}}", jsonpath: $.count}
      bulk: {driver: sqlite, dsn: records.db, query: "SELECT ref, count(*) FROM rs_records WHERE ref GLOB '{{.Prefix}}*' GROUP BY ref"}
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
}

// WriteShardSet writes into dir a synthetic set of n shard files of one run, about attempts
// attempts in all, made from the load plan (fresh operations, concurrent pairs, retries and
// cross-shard twins in the load property's mix) as a correct API answers them: each operation
// 201 with one body, every later attempt the same 201 replay or a 409 while in flight; with
// target.yaml and records.db (one record per operation).
func WriteShardSet(ctx context.Context, dir string, n int, attempts int64) (*ShardSet, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	targetPath := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(targetPath, []byte(shardSetTarget), 0o644); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(shardSetTarget))
	plan := framework.LoadPlan{Seed: 1, Shards: n, Rate: shardSetRate, Retry: framework.DefaultLoadRetryFraction, Twins: 0.1,
		Ops: 1, Tenants: 1, Instances: 1, Base: int64(framework.ShardSeqBase) * int64(n)}
	// Rounds per shard for the attempts asked, from the mix of the plan's first rounds.
	sample := int64(0)
	for k := range int64(2000) {
		sample += int64(len(roundAttempts(&plan, 0, k)))
	}
	rounds := max(1, attempts*2000/(sample*int64(n)))
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	db, err := sql.Open("sqlite", filepath.Join(dir, "records.db"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	for _, q := range []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF", "DROP TABLE IF EXISTS rs_records",
		"CREATE TABLE rs_records (id INTEGER PRIMARY KEY, ref TEXT NOT NULL)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	set := &ShardSet{Dir: dir, Target: targetPath, Shards: n}
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
		if err := insertRecords(ctx, db, ops, i); err != nil {
			return nil, err
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
	if _, err := db.ExecContext(ctx, "CREATE INDEX rs_records_ref ON rs_records (ref)"); err != nil {
		return nil, err
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

// insertRecords inserts one record for every operation shard i started.
func insertRecords(ctx context.Context, db *sql.DB, ops []shardfile.Operation, i int) error {
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
		if op.Owner != i {
			continue
		}
		if _, err := st.ExecContext(ctx, op.Ref); err != nil {
			return err
		}
	}
	return tx.Commit()
}
