package suites

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference"
)

func TestZZGap(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	r := sqliteEnv(t, reference.MutantRace, 0)
	dups := 0
	for i := range 40 {
		op := r.NewOp(r.Target.Operations[0])
		if os.Getenv("ZZGC") != "" {
			runtime.GC()
		}
		atts := r.Burst(op, 16)
		var arr []int64
		var lat []time.Duration
		for _, a := range atts {
			v, _ := strconv.ParseInt(a.RespHeader.Get(arrivalHeader), 10, 64)
			arr = append(arr, v)
			if a.Status == 201 {
				lat = append(lat, a.Duration())
			}
		}
		slices.Sort(arr)
		n, _ := op.Count()
		if n > 1 {
			dups++
		}
		if os.Getenv("ZZV") != "" {
			t.Logf("round %d: records %d, gaps 1-2 %v 1-3 %v 1-16 %v, 201s %d lat %v", i, n, time.Duration(arr[1]-arr[0]), time.Duration(arr[2]-arr[0]), time.Duration(arr[15]-arr[0]), len(lat), lat)
		}
	}
	t.Logf("dups %d/40", dups)
}
