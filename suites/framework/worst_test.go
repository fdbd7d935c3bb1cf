package framework_test

import (
	"context"
	"slices"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// TestRunSpecLeadsWithTheWorst: a spec's anomalies come out unsafe first, then in Kinds order,
// each with the statuses of its first and last attempt read from the history.
func TestRunSpecLeadsWithTheWorst(t *testing.T) {
	s := frameworktest.RefEnv(t, reference.MutantNone, 1, framework.Settings{})
	p := &framework.Property{Name: "worst-first", Side: framework.SideAPI}
	sp := p.Spec("two anomalies found in the wrong order", func(s *framework.S) check.Result {
		op := s.NewOp(s.Target.Operations[0])
		first := op.Do(framework.Send{Instance: 0})
		again := op.Do(framework.Send{Instance: 0, Variant: true})
		return check.Result{Anomalies: []reports.Anomaly{
			{Kind: reports.KindWrongStatus, Seqs: []int64{again.Seq}, Message: "found first"},
			{Kind: reports.KindDuplicateRecord, Seqs: []int64{first.Seq, again.Seq}, Message: "found second"},
		}}
	})
	out := s.Env.RunSpec(context.Background(), sp)
	as := out.Result.Anomalies
	if len(as) != 2 || as[0].Kind != reports.KindDuplicateRecord || as[1].Kind != reports.KindWrongStatus {
		t.Fatalf("anomalies = %+v, want the duplicate first", as)
	}
	if !slices.Equal(as[0].Statuses, []int{201, 422}) || !slices.Equal(as[1].Statuses, []int{422, 422}) {
		t.Errorf("statuses = %v and %v, want [201 422] and [422 422]", as[0].Statuses, as[1].Statuses)
	}
}
