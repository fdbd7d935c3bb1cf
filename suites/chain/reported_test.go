package chain

import (
	"regexp"
	"testing"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// What a client reported of each operation, read as its failure: block declares it.
func TestReported(t *testing.T) {
	one := 1
	ops := []framework.ClientOp{{Ref: "r-1"}, {Ref: "r-2"}, {Ref: "r-10"}}
	byLine := targets.ClientReport{ExitCode: &one, Output: regexp.MustCompile("^failed ")}
	tests := []struct {
		name   string
		f      targets.ClientReport
		code   int
		output []string
		ops    []framework.ClientOp
		want   map[string]check.ChainReport
	}{
		{"exit 0: every operation succeeded", byLine, 0, nil, ops,
			map[string]check.ChainReport{"r-1": check.ChainSucceeded, "r-2": check.ChainSucceeded, "r-10": check.ChainSucceeded}},
		{"a failure line names one ref, not the refs it prefixes", byLine, 1, []string{"ok r-10 key=k3", "failed r-1: 503 six times", "r-2 attempt 1/6: 201"}, ops,
			map[string]check.ChainReport{"r-1": check.ChainFailed, "r-2": check.ChainSucceeded, "r-10": check.ChainSucceeded}},
		{"an exit code alone names no operation of several", targets.ClientReport{ExitCode: &one}, 1, nil, ops,
			map[string]check.ChainReport{}},
		{"an exit code alone fails the one operation", targets.ClientReport{ExitCode: &one}, 1, nil, ops[:1],
			map[string]check.ChainReport{"r-1": check.ChainFailed}},
		{"killed: nothing reported", byLine, -1, []string{"ok r-1 key=k1"}, ops, map[string]check.ChainReport{}},
		{"another exit code: nothing reported", byLine, 2, []string{"--url: required"}, ops, map[string]check.ChainReport{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reported(tt.f, tt.code, tt.output, tt.ops)
			for _, op := range tt.ops {
				if got[op.Ref] != tt.want[op.Ref] {
					t.Errorf("%s: %q, want %q", op.Ref, got[op.Ref], tt.want[op.Ref])
				}
			}
		})
	}
}

// The hops go to distinct operations, the same ones for the same seed.
func TestPlan(t *testing.T) {
	p := plan(7)
	if len(p) != len(hopOrder) {
		t.Fatalf("plan(7) = %v: want one operation per hop", p)
	}
	for i, hop := range p {
		if i < 0 || i >= chainOps || hop == "" {
			t.Errorf("plan(7) = %v: operation %d of %d", p, i, chainOps)
		}
	}
	if q := plan(7); len(q) != len(p) || q[0] != p[0] || q[1] != p[1] || q[5] != p[5] {
		t.Errorf("plan(7) = %v, then %v", p, q)
	}
}
