package check

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The declared policy both ways: each status it lists retried must be retried, a status it does
// not declare must not be.

func TestRetriesTransientDeclaredStatuses(t *testing.T) {
	def := payOp(t)
	op := func(seq int64, ref, status string, retried bool, key string) ClientOp {
		as := []history.Attempt{try(seq, ref, ref+"-k", status, int(seq)*1000, int(seq)*1000+1)}
		if retried {
			as = append(as, try(seq+1, ref, key, AnswerSuccess, int(seq)*1000+200, int(seq)*1000+201))
		}
		return opOf(def, as...)
	}
	rfc := policy(func(p *targets.RetryPolicy) { p.Retries = []string{"reset", "timeout", "502", "503", "504", "429"} })
	tests := []policyCase{
		{"409 and 429 retried, 408 not", clientRun(op(1, "r-1", "409", true, "r-1-k"), op(3, "r-2", "429", true, "r-2-k"),
			op(5, "r-3", "408", false, "")), policy(), reports.Pass, nil, ""},
		{"a 429 declared and never retried", clientRun(op(1, "r-1", "409", true, "r-1-k"), op(3, "r-2", "429", false, "")), policy(),
			reports.Fail, []string{"no-retry seqs=3"}, "was not retried after a 429"},
		{"a 408 neither retried nor never resent, retried", clientRun(op(1, "r-1", "408", true, "r-1-k")), policy(), reports.Fail,
			[]string{"undeclared-retry seqs=1,2"}, "retried after a 408, a status the client declares neither in retry.retries nor in retry.never"},
		{"a 408 resent with a new key is a new request", clientRun(op(1, "r-1", "408", true, "r-1-other")), policy(), reports.Pass, nil, ""},
		{"a 408 listed, retried", clientRun(op(1, "r-1", "408", true, "r-1-k")), policy(func(p *targets.RetryPolicy) {
			p.Retries = append(p.Retries, "408")
		}), reports.Pass, nil, ""},
		{"a 501 when only some 5xx are listed, retried", clientRun(op(1, "r-1", "503", true, "r-1-k"), op(3, "r-2", "501", true, "r-2-k")), rfc,
			reports.Fail, []string{"undeclared-retry seqs=3,4"}, "retried after a 501"},
		{"a 501 when only some 5xx are listed, not retried", clientRun(op(1, "r-1", "503", true, "r-1-k"), op(3, "r-2", "501", false, "")), rfc,
			reports.Pass, nil, ""},
	}
	runPolicyCases(t, tests, RetriesTransient)
}
