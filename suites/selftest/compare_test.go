package selftest

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	a := &Result{
		Correct: []Correct{{Store: "sqlite", Property: "race", Result: "pass"}, {Store: "sqlite", Side: SideClient, Property: "backoff", Result: "pass"}},
		Cells: []Cell{
			{Mutant: "race", Store: "sqlite", Property: "race", Result: Killed, Required: true},
			{Mutant: "split-write", Store: "sqlite", Property: "crash-under-load", Result: Killed},
			{Mutant: "no-dedupe", Transport: "amqp", Store: "postgres", Property: "redelivery", Result: Killed, Required: true},
		},
	}
	same := &Result{Correct: slices.Clone(a.Correct), Cells: slices.Clone(a.Cells)}
	if d := Compare(a, same); len(d) != 0 {
		t.Fatalf("identical self-tests differ: %+v", d)
	}
	b := &Result{Correct: slices.Clone(a.Correct), Cells: slices.Clone(a.Cells[:2])}
	b.Correct[1].Result = "fail"
	b.Cells[1].Result = Survived // reported only
	b.Cells = append(b.Cells, Cell{Mutant: "no-dedupe", Transport: "nats", Store: "postgres", Property: "redelivery", Result: Killed, Required: true})
	got := Compare(a, b)
	want := []Difference{
		{What: "(correct client) sqlite backoff", A: "pass", B: "fail", Required: true},
		{What: "split-write sqlite (crash-under-load)", A: Killed, B: Survived},
		{What: "no-dedupe amqp postgres (redelivery)", A: Killed, B: "absent", Required: true},
		{What: "no-dedupe nats postgres (redelivery)", A: "absent", B: Killed, Required: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Compare =\n%+v\nwant\n%+v", got, want)
	}
	if r := Required(got); len(r) != 3 {
		t.Errorf("Required = %+v, want the three required differences", r)
	}
}
