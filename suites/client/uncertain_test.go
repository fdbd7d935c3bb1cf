package client_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"

	refclient "github.com/retrysafe/retrysafe/targets/reference/client"
)

// uncertain selects uncertain-stays-pending.
var uncertain = suites.Select("property:uncertain-stays-pending", "")

// withoutPending is testdata/again.yaml without its outcome block.
func withoutPending(t *testing.T) string {
	t.Helper()
	return fileVariant(t, "testdata/again.yaml", func(s string) string {
		start, end := strings.Index(s, "    outcome:\n"), strings.Index(s, "    ops:\n")
		if start < 0 || end < start {
			return s
		}
		return s[:start] + s[end:]
	})
}

// A client that declares no outcome.pending cannot be asked what it reports of an operation whose
// outcome it cannot know: uncertain-stays-pending skips, saying so, for the whole file when no
// client declares it, and for the one client that does not when another does. Nothing is run.
func TestUncertainSkipsWithoutOutcomePending(t *testing.T) {
	rec := &recorder{t: t}
	run := suites.RunClientT(rec, withoutPending(t), againClient, uncertain)
	if len(run.Properties) != 1 || run.Properties[0].Verdict != reports.Skipped ||
		!strings.Contains(run.Properties[0].Reason, "no client declares outcome.pending (how it reports an operation whose outcome it cannot know)") {
		t.Errorf("without outcome.pending: %+v, want skipped saying no client declares outcome.pending", run.Properties)
	}

	two := fileVariant(t, "testdata/again.yaml", func(s string) string {
		i := strings.Index(s, "  - name: again\n")
		client := s[i:]
		start, end := strings.Index(client, "    outcome:\n"), strings.Index(client, "    ops:\n")
		return s + strings.Replace(client[:start]+client[end:], "name: again", "name: plain", 1)
	})
	rec = &recorder{t: t}
	run = suites.RunClientT(rec, two, againClient, suites.Select("property:uncertain-stays-pending && client:plain", ""))
	if len(run.Properties) != 1 || len(run.Properties[0].Specs) != 1 {
		t.Fatalf("client plain: %+v, want one spec", run.Properties)
	}
	sp := run.Properties[0].Specs[0]
	if sp.Verdict != reports.Skipped || !strings.Contains(sp.Failure, "client plain declares no outcome.pending") {
		t.Errorf("client plain: %s %q, want skipped saying it declares no outcome.pending", sp.Verdict, sp.Failure)
	}
}

// Driven in-process (an error wrapping suites.ErrPending reports pending), the reference client
// passes; as pending-as-failure it fails with uncertain-reported-as-failure, as forgets-pending
// with key-lost-on-restart and duplicate-record.
func TestUncertainStaysPendingInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a client through the scenario three times")
	}
	for _, c := range []struct {
		mutant refclient.Mutant
		want   []reports.Kind
	}{
		{refclient.MutantNone, nil},
		{refclient.MutantPendingAsFailure, []reports.Kind{reports.KindUncertainReportedAsFailure, reports.KindAbandonedOperation}},
		{refclient.MutantForgetsPending, []reports.Kind{reports.KindKeyLostOnRestart, reports.KindBodyChangedOnRetry, reports.KindDuplicateRecord}},
	} {
		name := string(c.mutant)
		if name == "" {
			name = "correct"
		}
		t.Run(name, func(t *testing.T) {
			rec := &recorder{t: t}
			run := suites.RunClientT(rec, "testdata/again.yaml", referenceAs(c.mutant), uncertain)
			got, kinds := verdicts(run)
			want := reports.Pass
			if c.want != nil {
				want = reports.Fail
			}
			slices.Sort(kinds["uncertain-stays-pending"])
			slices.Sort(c.want)
			if got["uncertain-stays-pending"] != want || !slices.Equal(kinds["uncertain-stays-pending"], c.want) {
				t.Errorf("uncertain-stays-pending: %s %v, want %s %v\n%s", got["uncertain-stays-pending"], kinds["uncertain-stays-pending"], want, c.want,
					strings.Join(rec.errs, "\n"))
			}
		})
	}
}
