package suites

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
)

// RunT runs the properties against the target file from a team's own `go test`: every
// failing property is a test error carrying its evidence; a verdict left unknown is an error
// too (the run could not establish that retries are safe).
func RunT(t testing.TB, targetFile string, opts RunOptions) *reports.Run {
	t.Helper()
	target, err := targets.Load(targetFile)
	if err != nil {
		t.Fatalf("retrysafe: %v", err)
	}
	t.Cleanup(func() { target.Close() })
	return RunTarget(t, target, Settings{}, opts)
}

// RunTarget is RunT for a target already loaded.
func RunTarget(t testing.TB, target *targets.Target, s Settings, opts RunOptions) *reports.Run {
	t.Helper()
	env := NewEnv(target, s)
	defer env.Close()
	run, err := Run(env, opts)
	if err != nil {
		t.Fatalf("retrysafe: %v", err)
	}
	for _, p := range run.Properties {
		switch p.Verdict {
		case reports.Fail:
			for _, s := range p.Specs {
				if s.Verdict == reports.Fail {
					t.Errorf("retrysafe: property %s: %s\n%s%s", p.Name, s.Text, s.Failure, evidenceText(s.Evidence))
				}
			}
		case reports.Unknown:
			t.Errorf("retrysafe: property %s: verdict unknown: %s", p.Name, p.Reason)
		case reports.Skipped:
			t.Logf("retrysafe: property %s skipped: %s", p.Name, p.Reason)
		}
	}
	return run
}

func evidenceText(ev *reports.Evidence) string {
	if ev == nil {
		return ""
	}
	var b strings.Builder
	if ev.Message != "" {
		b.WriteString("\n" + ev.Message)
	}
	for name, n := range ev.Counts {
		b.WriteString("\n" + name + " = " + itoa(n))
	}
	if ev.Repro != "" {
		b.WriteString("\nrepro: " + ev.Repro)
	}
	return b.String()
}
