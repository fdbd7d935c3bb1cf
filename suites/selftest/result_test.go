package selftest

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/targets/broker"
)

func TestResultProblems(t *testing.T) {
	pass := Result{
		Correct: []Correct{{Store: "sqlite", Property: "replay", Result: "pass"}},
		Cells: []Cell{
			{Mutant: "no-lock", Store: "sqlite", Property: "race", Result: Killed, Required: true},
			{Mutant: "split-write", Store: "sqlite", Property: "crash-under-load", Result: Survived}, // reported only
		},
		Left: &Left{Brokers: &broker.Inventory{}},
	}
	if p := pass.Problems(); len(p) != 0 || !pass.OK() {
		t.Fatalf("a passing self-test has problems: %v", p)
	}
	cases := map[string]func(r *Result){
		"the correct reference failed 1 property runs": func(r *Result) { r.Correct[0].Result = "fail" },
		"1 required mutant cells survived":             func(r *Result) { r.Cells[0].Result = Survived },
		"left queues [retrysafe-st1-amqp-1-q]": func(r *Result) {
			r.Left = &Left{Brokers: &broker.Inventory{Queues: []string{"retrysafe-st1-amqp-1-q"}}}
		},
		"PostgreSQL schemas rs_st1_4": func(r *Result) { r.Left = &Left{Schemas: []string{"rs_st1_4"}} },
		"3 Redis keys":                func(r *Result) { r.Left = &Left{RedisKeys: 3} },
	}
	for want, spoil := range cases {
		r := pass
		r.Correct = append([]Correct(nil), pass.Correct...)
		r.Cells = append([]Cell(nil), pass.Cells...)
		spoil(&r)
		p := r.Problems()
		if r.OK() || len(p) != 1 || !strings.Contains(p[0], want) {
			t.Errorf("want one problem containing %q, got %v", want, p)
		}
	}
}
