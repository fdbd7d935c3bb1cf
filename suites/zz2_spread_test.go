package suites

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
)

func TestZZTrivial(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set(arrivalHeader, strconv.FormatInt(time.Now().UnixNano(), 10))
		w.WriteHeader(201)
	}))
	defer srv.Close()
	vars := map[string]string{"RETRYSAFE_URL": srv.URL}
	target, _ := targets.Parse("reference.yaml", examples.Reference, func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	e := NewEnv(target, Settings{Seed: 1})
	defer e.Close()
	for _, mode := range []string{RaceModeLastByte, RaceModeBarrier, RaceModeLastByte, RaceModeBarrier} {
		e.Settings.RaceMode = mode
		var sp []time.Duration
		for range 40 {
			d, _ := ArrivalSpread(e.Burst(e.NewOp(e.Target.Operations[0]), 16))
			sp = append(sp, d)
		}
		slices.Sort(sp)
		t.Logf("%s p50 %v p90 %v min %v", mode, sp[20], sp[36], sp[0])
	}
}
