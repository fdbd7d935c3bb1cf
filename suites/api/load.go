package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// load: sustained concurrent load, driven by Vegeta through the harness's own client, with a
// mix of fresh operations, sequential retries of earlier ones and concurrent duplicates (a
// new operation fired twice at once), over every declared instance, tenant and operation.
//
// The target MUST leave exactly one business record for every operation that got a 2xx and
// never two; every later 2xx answer MUST equal the first; no answer may be a 5xx or a status
// other than 2xx, the in-flight status or 429.
//
// Catches: race (concurrent duplicates both execute), and two `--store memory` instances
// behind one target (a retry that lands on the other instance executes again).
func init() {
	p := &Property{
		Name: "load",
		Must: `Under sustained concurrent load (fresh operations mixed with sequential retries and
concurrent duplicates, across all instances, tenants and operations) every operation that got a 2xx
MUST leave exactly one business record and none MUST leave two; every later 2xx answer MUST equal the
first; no answer MUST be a 5xx or a status other than 2xx, the in-flight status or 429. An operation
retried a declared retention or more after its first attempt (a stretched run) may execute again.`,
		Catches: []string{"race", "two memory-store instances"},
		Needs: []string{"operations", "operations[].observer (for the record counts)",
			"instances (all are used)", "tenants (all are used)"},
	}
	p.Specs = func(e *Env) []*Spec {
		st := e.Settings
		return []*Spec{spec(p, fmt.Sprintf("%d hits/s for %s, %.0f%% of them retries and concurrent duplicates: one record per operation, equal replays, no 5xx",
			st.LoadRate, st.LoadDuration, 100*st.LoadRetryFraction), func(s *S) check.Result {
			run := s.Load(st.LoadRate, st.LoadDuration)
			s.Figure(run.Figures())
			if run.Plot != nil {
				s.Artefact(framework.LoadPlotFile, run.Plot)
			}
			if run.Err != nil {
				return check.Unknownf("the load could not be generated: %v", run.Err)
			}
			countErr := ""
			if len(run.CountErrors) > 0 {
				countErr = run.CountErrors[0]
			}
			res := run.Result.Judge(run.Uncounted, countErr)
			run.Raced(&res)
			return res
		})}
	}
	register(p)
}
