package bench

import (
	"os"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/suites/history"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
)

func TestZZCheck(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	tg, _ := targets.Parse("reference.yaml (embedded)", examples.Reference, func(string) (string, bool) { return "", false })
	p := tg.Profile
	h := history.New(history.NewRedactor([]string{"Bearer alice", "alice"}, nil))
	h.Compact(history.CompactOptions{Full: func(a history.Attempt) bool {
		return (a.Status < 200 || a.Status > 299) && !p.AcceptsInFlightStatus(a.Status)
	}})
	gen := newSynth()
	n := 1_000_000
	st := time.Now()
	for range n {
		h.Add(gen.next())
	}
	t.Logf("add %v", time.Since(st))
	counts := map[string]int{}
	for i := range gen.ops {
		counts[synthKey(i)] = 1
	}
	st = time.Now()
	k := 0
	for range h.After(0) {
		k++
	}
	t.Logf("iterate %v", time.Since(st))
	st = time.Now()
	res := suites.CheckLoad(h.After(0), counts, p)
	t.Logf("check %v %d", time.Since(st), len(res.Anomalies))
}
