package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// parseRun parses `retrysafe run args...` and returns the flags its body would run with, or the
// error the arguments gave; nothing runs.
func parseRun(t *testing.T, args ...string) (*runFlags, error) {
	t.Helper()
	f := new(runFlags)
	cmd := runCommand(f)
	cmd.RunE = func(*cobra.Command, []string) error { return nil }
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return f, cmd.Execute()
}

func TestRunArguments(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		target, chain string
		err           string
	}{
		{args: []string{"t.yaml"}, target: "t.yaml"},
		{args: []string{"--target", "t.yaml"}, target: "t.yaml"},
		{args: []string{"t.yaml", "--target", "t.yaml"}, target: "t.yaml"},
		{args: []string{"--label-filter", "property:race", "t.yaml", "--seed", "3"}, target: "t.yaml"},
		{args: []string{"--chain", "nats"}, chain: "nats"},
		{args: []string{"--chain=nats"}, chain: "nats"},
		{args: []string{"--chain", "webhook", "--store", "postgres"}, chain: "webhook"},
		{args: []string{"--chain"}, chain: "amqp"},
		{args: []string{"--chain", "--store", "postgres"}, chain: "amqp"},
		{args: []string{"--chain=kafka"}, err: `--chain: unknown transport "kafka"`},
		{args: []string{"--chain", "t.yaml"}, err: "--chain tests the reference chain: it takes no target file"},
		{args: []string{"a.yaml", "b.yaml"}, err: "takes one target file, got 2 arguments"},
		{args: []string{"a.yaml", "--target", "b.yaml"}, err: "the target file is given twice"},
	} {
		f, err := parseRun(t, tc.args...)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("run %v: error %v, want one containing %q", tc.args, err, tc.err)
			} else if code := exitCode(err); code != exitUsage {
				t.Errorf("run %v: exit %d, want %d", tc.args, code, exitUsage)
			}
		case err != nil:
			t.Errorf("run %v: %v", tc.args, err)
		case f.target != tc.target || f.chain != tc.chain:
			t.Errorf("run %v: target %q, chain %q; want %q, %q", tc.args, f.target, f.chain, tc.target, tc.chain)
		}
	}
}

// TestRunFileIsTheTarget runs `run FILE` and `run --target FILE` on a file with a problem: both
// load FILE as the target file and stop on the same located problem.
func TestRunFileIsTheTarget(t *testing.T) {
	file := writeTargetFile(t, t.TempDir(), "name: broken\ninstances: [http://127.0.0.1:1]\noperations:\n  - name: orders\n    pth: /v1/orders\n")
	dir := t.TempDir()
	var outs []string
	for _, args := range [][]string{{"run", file}, {"run", "--target", file}} {
		res := execCLI(t, append(args, "--report-dir", dir)...)
		if res.code != exitUsage {
			t.Fatalf("%v: exit %d, want %d:\n%s", args, res.code, exitUsage, res.out)
		}
		mustContain(t, strings.Join(args, " "), res.out, file+":5: operations[0].pth: unknown field")
		outs = append(outs, res.out)
	}
	if outs[0] != outs[1] {
		t.Errorf("run FILE and run --target FILE differ:\n%s\n---\n%s", outs[0], outs[1])
	}
}

func TestProbeAndMergeTakeTheTargetAsArgument(t *testing.T) {
	f := new(probeFlags)
	probe := probeCommand(f)
	probe.RunE = func(*cobra.Command, []string) error { return nil }
	probe.SetArgs([]string{"t.yaml", "--json"})
	if err := probe.Execute(); err != nil || f.target != "t.yaml" {
		t.Errorf("probe t.yaml: target %q, err %v", f.target, err)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(file, []byte("name: t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		args   []string
		want   string
		dirs   int
	}{
		{args: []string{file, dir}, want: file, dirs: 1},
		{target: file, args: []string{dir}, want: file, dirs: 1},
		{args: []string{dir, dir}, want: "", dirs: 2},
	} {
		m := &mergeFlags{target: tc.target}
		dirs := mergeTarget(m, tc.args)
		if m.target != tc.want || len(dirs) != tc.dirs {
			t.Errorf("merge %v (--target %q): target %q, folders %v; want %q and %d folders", tc.args, tc.target, m.target, dirs, tc.want, tc.dirs)
		}
	}
}

func TestUnknownFlagSuggestsTheNearest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--taget", "t.yaml"}, "unknown flag: --taget (did you mean --target?)"},
		{[]string{"run", "--label-filte", "x"}, "did you mean --label-filter?"},
		{[]string{"validate", "--strict", "t.yaml"}, "unknown flag: --strict (see 'retrysafe validate --help')"},
		{[]string{"probe", "--max-request", "3"}, "did you mean --max-requests?"},
	} {
		res := execCLI(t, tc.args...)
		if res.code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, res.code, exitUsage)
		}
		mustContain(t, strings.Join(tc.args, " "), res.out, tc.want)
	}
}
