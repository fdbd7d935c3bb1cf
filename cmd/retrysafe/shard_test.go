package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/targets"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		spec       string
		env        map[string]string
		i, n       int
		wantErrHas string
	}{
		{spec: "2/4", i: 2, n: 4},
		{spec: "0/1", i: 0, n: 1},
		{spec: "4", env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, i: 3, n: 4},
		{spec: "4", env: map[string]string{"CI_NODE_INDEX": "1"}, i: 0, n: 4},
		{spec: "2/4", env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, i: 2, n: 4},
		{spec: "2/4", env: map[string]string{"JOB_COMPLETION_INDEX": "1"}, wantErrHas: "conflict"},
		{spec: "4", env: map[string]string{"JOB_COMPLETION_INDEX": "1", "CI_NODE_INDEX": "3"}, wantErrHas: "conflict"},
		{spec: "4", wantErrHas: "no shard index"},
		{spec: "4", env: map[string]string{"JOB_COMPLETION_INDEX": "4"}, wantErrHas: "there are 4"},
		{spec: "4", env: map[string]string{"CI_NODE_INDEX": "0"}, wantErrHas: "1-based"},
		{spec: "4/4", wantErrHas: "from 0 to 3"},
		{spec: "-1/4", wantErrHas: "from 0 to 3"},
		{spec: "a/b", wantErrHas: "I/N or N"},
		{spec: "0", wantErrHas: "at least 1"},
	} {
		i, n, err := parseShard(tc.spec, func(k string) string { return tc.env[k] })
		switch {
		case tc.wantErrHas != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrHas)):
			t.Errorf("--shard %s %v: %d/%d, %v; want an error with %q", tc.spec, tc.env, i, n, err, tc.wantErrHas)
		case tc.wantErrHas == "" && (err != nil || i != tc.i || n != tc.n):
			t.Errorf("--shard %s %v: %d/%d, %v; want %d/%d", tc.spec, tc.env, i, n, err, tc.i, tc.n)
		}
	}
}

func TestShardRefusals(t *testing.T) {
	t.Setenv("RETRYSAFE_URL", "http://127.0.0.1:1")
	load := func(name string) *targets.Target {
		t.Helper()
		tg, err := targets.Load(filepath.Join("..", "..", "targets", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	if why := shardRefusal(load("reference.yaml")); why != "" {
		t.Fatalf("the reference example is refused: %s", why)
	}
	for name, wants := range map[string]string{
		"reference-managed.yaml": "lifecycle",
		"reference-hooks.yaml":   "hooks",
	} {
		if why := shardRefusal(load(name)); !strings.Contains(why, wants) || !strings.Contains(why, "normal `retrysafe run`") {
			t.Errorf("%s: refusal %q, want one naming %s", name, why, wants)
		}
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "targets", "examples", "reference.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(src), "      name: Idempotency-Key           # the default for header keys",
		"      name: Idempotency-Key\n      format: \"order-{{.Seq}}\"", 1)
	path := filepath.Join(t.TempDir(), "fixed.yaml")
	os.WriteFile(path, []byte(fixed), 0o644)
	tg, err := targets.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if why := shardRefusal(tg); !strings.Contains(why, "{{.Run}}") {
		t.Fatalf("a key format without {{.Run}}: refusal %q", why)
	}
}

func TestRunShardRefusesBadFlags(t *testing.T) {
	t.Setenv("RETRYSAFE_URL", "http://127.0.0.1:1")
	ref := filepath.Join("..", "..", "targets", "examples", "reference.yaml")
	for _, tc := range []struct {
		args  []string
		wants string
	}{
		{[]string{"run", "--shard", "1/4", "--target", ref, "--start-at", "2026-12-01T10:00:00Z"}, "--run"},
		{[]string{"run", "--shard", "1/4", "--target", ref, "--run", "r"}, "--start-at"},
		{[]string{"run", "--shard", "1/4", "--target", ref, "--run", "r", "--start-at", "10:00"}, "RFC 3339"},
		{[]string{"run", "--shard", "1/4", "--target", ref, "--run", "r", "--start-at", "2026-12-01T10:00:00Z", "--key", "k"}, "--key"},
		{[]string{"run", "--shard", "1/4", "--run", "r", "--start-at", "2026-12-01T10:00:00Z"}, "--target"},
		{[]string{"run", "--run", "r"}, "give --shard too"},
		{[]string{"run", "--shard", "1/4", "--target", filepath.Join("..", "..", "targets", "examples", "reference-managed.yaml"),
			"--run", "r", "--start-at", "2026-12-01T10:00:00Z"}, "cannot run as a shard"},
		{[]string{"merge", "--target", ref}, "folders"},
		{[]string{"merge", t.TempDir()}, "--target"},
	} {
		var out bytes.Buffer
		root := newRoot()
		root.SetArgs(tc.args)
		root.SetOut(&out)
		root.SetErr(&out)
		err := root.Execute()
		if err != nil {
			out.WriteString(err.Error())
		}
		if code := exitCode(err); code != exitUsage || !strings.Contains(out.String(), tc.wants) {
			t.Errorf("retrysafe %s: exit %d, %q; want exit 2 naming %s", strings.Join(tc.args, " "), exitCode(err), out.String(), tc.wants)
		}
	}
}
