package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
)

// unmatchedHeals returns a sentence for every heal in a report's fault timeline that does not
// follow an inject of the same fault (same name, kind and target) still held; observe events
// (a broker's redelivery) are not faults.
func unmatchedHeals(run *reports.Run) []string {
	held := map[string]int{}
	var out []string
	for _, f := range run.Faults {
		id := f.Kind + "|" + f.Target + "|" + f.Fault
		switch f.Action {
		case "inject":
			held[id]++
		case "heal":
			if held[id] == 0 {
				out = append(out, fmt.Sprintf("heal %s of %s at %s follows no inject of it", f.Kind, f.Target, f.At.Format("15:04:05.000")))
				continue
			}
			held[id]--
		}
	}
	return out
}

// TestReportedHealsFollowInjects reads the report.json of each run directory named in
// RETRYSAFE_CHECK_REPORTS (comma-separated; ci/test.sh names its default run and its three
// `run --consumer` runs once they are done) and checks that every heal follows an inject of the
// same fault. Without the variable there is nothing to read: the test says so and skips.
func TestReportedHealsFollowInjects(t *testing.T) {
	dirs := os.Getenv("RETRYSAFE_CHECK_REPORTS")
	if dirs == "" {
		t.Skip("RETRYSAFE_CHECK_REPORTS names no run directory: ci/test.sh sets it after its runs (TestDefaultRunReportsEveryFault checks the default run's report itself)")
	}
	for _, dir := range strings.Split(dirs, ",") {
		run, err := reports.ReadJSON(filepath.Join(dir, "report.json"))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		injects := 0
		for _, f := range run.Faults {
			if f.Action == "inject" {
				injects++
			}
		}
		if injects == 0 {
			t.Errorf("%s: report.json lists no injected fault: nothing was checked", dir)
		}
		for _, p := range unmatchedHeals(run) {
			t.Errorf("%s: %s", dir, p)
		}
	}
}

func TestUnmatchedHeals(t *testing.T) {
	ev := func(action, fault string) reports.FaultEvent {
		return reports.FaultEvent{Action: action, Kind: "hold-downstream", Target: "downstream", Fault: fault}
	}
	run := &reports.Run{Faults: []reports.FaultEvent{ev("inject", "a"), ev("heal", "a"), ev("heal", "a"), ev("heal", "b"),
		{Action: "observe", Kind: "broker-redelivery"}}}
	if got := unmatchedHeals(run); len(got) != 2 {
		t.Errorf("unmatched heals = %q, want the second heal of a and the heal of b", got)
	}
	if got := unmatchedHeals(&reports.Run{Faults: []reports.FaultEvent{ev("inject", "a"), ev("heal", "a")}}); len(got) != 0 {
		t.Errorf("an inject then its heal: %q, want none", got)
	}
}
