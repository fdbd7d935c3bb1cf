package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
)

func TestRunRefusesRemoteTarget(t *testing.T) {
	dir := t.TempDir()
	target := writeTargetFile(t, dir, strings.Replace(referenceTarget("http://api.example.invalid"),
		`instances: ["http://api.example.invalid"]`, `instances: ["http://127.0.0.1:1", "http://api.example.invalid:8443/base"]`, 1))
	reportDir := filepath.Join(dir, "report")
	res := execCLI(t, "run", "--target", target, "--report-dir", reportDir)
	if res.code != exitUsage {
		t.Fatalf("exit %d, want %d:\n%s", res.code, exitUsage, res.out)
	}
	mustContain(t, "output", res.out, "--allow-remote", `"api.example.invalid"`, "not localhost or a loopback address",
		"without a DNS lookup", "nothing was sent")
	if strings.Contains(res.out, "unreachable") {
		t.Errorf("the refusal must come before any request:\n%s", res.out)
	}
	if res.elapsed > 2*time.Second {
		t.Errorf("refusal took %v", res.elapsed)
	}
	if _, err := os.Stat(reportDir); err == nil {
		t.Errorf("a refused run wrote %s", reportDir)
	}
}

func TestLeaveDefaults(t *testing.T) {
	f := new(runFlags)
	cmd := runCommand(f)
	if err := cmd.ParseFlags([]string{"--rounds", "9"}); err != nil {
		t.Fatal(err)
	}
	leaveDefaults(cmd, &f.settings)
	s := f.settings
	if s.RaceK != 0 || s.ReplayN != 0 || s.LoadRate != 0 || s.RaceRounds != 9 {
		t.Errorf("burst, rounds, replays, load rate = %d, %d, %d, %d; want 0, 9, 0, 0 (the harness's defaults but --rounds)",
			s.RaceK, s.RaceRounds, s.ReplayN, s.LoadRate)
	}
}

func TestRunUnreachableTargetExits2(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	hanging, err := net.Listen("tcp", "127.0.0.1:0") // accepts (the kernel does) and never answers
	if err != nil {
		t.Fatal(err)
	}
	defer hanging.Close()

	for _, tc := range []struct {
		name, addr string
		within     time.Duration
	}{
		{"refused", closed, 2 * time.Second},
		{"silent", hanging.Addr().String(), 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := writeTargetFile(t, dir, referenceTarget("http://"+tc.addr))
			res := execCLI(t, "run", "--target", target, "--report-dir", filepath.Join(dir, "report"))
			if res.code != exitUsage {
				t.Fatalf("exit %d, want %d:\n%s", res.code, exitUsage, res.out)
			}
			mustContain(t, "output", res.out, "unreachable", tc.addr)
			if res.elapsed > tc.within {
				t.Errorf("took %v, want under %v", res.elapsed, tc.within)
			}
		})
	}
}

func TestRunOverallDeadline(t *testing.T) {
	srv := startSlowReference(t, 300*time.Millisecond)
	dir := t.TempDir()
	target := writeTargetFile(t, dir, referenceTarget(srv.URL))
	reportDir := filepath.Join(dir, "report")
	res := execCLI(t, "run", "--target", target, "--report-dir", reportDir, "--timeout", "3s",
		"--label-filter", "property:replay || property:control", "--replays", "100")
	if res.code != exitIncomplete {
		t.Fatalf("exit %d, want %d:\n%s", res.code, exitIncomplete, res.out)
	}
	if res.elapsed > 6*time.Second {
		t.Errorf("a run with --timeout 3s took %v", res.elapsed)
	}
	run := readReport(t, reportDir)
	if run.Complete || !strings.Contains(run.Incomplete, "deadline") {
		t.Errorf("complete = %v, incomplete = %q; want false and a deadline", run.Complete, run.Incomplete)
	}
	if len(run.Properties) == 0 || run.Properties[0].Name != "replay" || run.Properties[0].Verdict != reports.Unknown {
		t.Errorf("properties = %+v; want replay unknown", run.Properties)
	}
	for _, f := range []string{"junit.xml", "summary.md"} {
		if _, err := os.Stat(filepath.Join(reportDir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
