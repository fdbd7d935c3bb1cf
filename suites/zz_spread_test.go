package suites

import (
	"os"
	"slices"
	"testing"
	"time"
	"path/filepath"
	"net/http/httptest"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

func sqliteEnv(t *testing.T, m reference.Mutant, delay time.Duration) *Env {
	st, err := reference.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "x.db"))
	if err != nil { t.Fatal(err) }
	api, _ := reference.NewAPI(reference.Config{Store: st, Tenants: []string{"alice", "bob"}, Mutant: m,
		Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout, WorkDelay: delay})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	vars := map[string]string{"RETRYSAFE_URL": srv.URL}
	target, _ := targets.Parse("reference.yaml", examples.Reference, func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	e := NewEnv(target, Settings{Seed: 1})
	t.Cleanup(e.Close)
	return e
}

func TestZZSpread(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	e := refEnv(t, reference.MutantNone, 1, Settings{})
	r := sqliteEnv(t, reference.MutantRace, 0)
	type v struct{ mode string; variant int }
	vs := []v{{RaceModeLastByte, 0}, {RaceModeBarrier, 0}}
	sp := map[v][]time.Duration{}
	dup := map[v]int{}
	for range 40 {
		for _, x := range vs {
			e.Settings.RaceMode, r.Settings.RaceMode = x.mode, x.mode
			atts := e.Burst(e.NewOp(e.Target.Operations[0]), 16)
			d, _ := ArrivalSpread(atts)
			sp[x] = append(sp[x], d)
			op := r.NewOp(r.Target.Operations[0])
			r.Burst(op, 16)
			if n, _ := op.Count(); n > 1 { dup[x]++ }
		}
	}
	for _, x := range vs {
		s := sp[x]
		slices.Sort(s)
		t.Logf("%v p50 %v p90 %v min %v  sqlite race dups %d/40", x, s[20], s[36], s[0], dup[x])
	}
}
