package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
)

// TestDefaultRunReportsEveryFault runs the README's first command (`retrysafe run`, no target
// file: the managed reference API) as a built binary, and checks that its report.json lists
// every SIGKILL the crash properties injected (crash-after-claim's, at least one, and each of
// crash-under-load's, which it counts in its figures), and that report.html lists one timeline
// row per fault event and draws each in a mark (one mark stands for every fault of its pixel
// column).
func TestDefaultRunReportsEveryFault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := buildRetrysafe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	reportDir := filepath.Join(dir, "report")
	cmd := exec.CommandContext(ctx, bin, "run", "--report-dir", reportDir)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // it stops what it started
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("retrysafe run: %v\n%s", err, out)
	}
	run, err := reports.ReadJSON(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var crashLoad *reports.Property
	for i := range run.Properties {
		if run.Properties[i].Name == "crash-under-load" {
			crashLoad = &run.Properties[i]
		}
	}
	if crashLoad == nil || crashLoad.Verdict != reports.Pass {
		t.Fatalf("the default run has no passing crash-under-load: %+v", crashLoad)
	}
	loadKills, err := strconv.Atoi(crashLoad.Figures["kills"])
	if err != nil || loadKills < 1 {
		t.Fatalf("crash-under-load's figures %v name no kills", crashLoad.Figures)
	}
	for _, p := range unmatchedHeals(run) {
		t.Errorf("report.json: %s", p)
	}
	kills := 0
	for _, f := range run.Faults {
		if f.Action == "inject" && f.Kind == "kill" {
			kills++
		}
	}
	if kills < 1+loadKills {
		t.Errorf("report.json lists %d injected kills, want at least %d (crash-after-claim's and crash-under-load's %d)", kills, 1+loadKills, loadKills)
	}
	html, err := os.ReadFile(filepath.Join(reportDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	// A mark stands for the faults of its pixel column: "... (and N more)" in its title.
	marks := 0
	for _, mark := range strings.Split(page, `<rect class="mark-fault"`)[1:] {
		title, _, _ := strings.Cut(mark, "</title>")
		marks++
		if i := strings.LastIndex(title, " (and "); i >= 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(title[i+len(" (and "):], " more)"))
			if err != nil {
				t.Fatalf("fault mark title %q: %v", title, err)
			}
			marks += n
		}
	}
	_, list, ok := strings.Cut(page, `<table id="fault-list">`)
	list, _, closed := strings.Cut(list, "</table>")
	if !ok || !closed {
		t.Fatalf("report.html has no fault list")
	}
	rows := strings.Count(list, "<tr><td")
	if marks != len(run.Faults) || rows != len(run.Faults) {
		t.Errorf("report.html draws marks for %d faults and lists %d fault rows, want one of each per fault event (%d)", marks, rows, len(run.Faults))
	}
	t.Logf("%d fault events, %d injected kills (crash-under-load %d)", len(run.Faults), kills, loadKills)
}
