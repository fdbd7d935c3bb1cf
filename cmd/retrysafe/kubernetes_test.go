package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	goyaml "github.com/goccy/go-yaml"
	"github.com/retrysafe/retrysafe/targets"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestKubernetesShardJob checks that the shard Job runs every shard at once, once, and writes
// them where the claim keeps them.
func TestKubernetesShardJob(t *testing.T) {
	km := loadKubeManifests(t)
	j := km.job(t, "retrysafe-shards")
	c := container(t, j)
	spec := j.Spec
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Fatalf("job/%s runs retrysafe %q, want retrysafe run", j.Name, c.Args)
	}
	shard, _ := flagValue(c.Args, "shard")
	n, err := shardCount(shard)
	if err != nil {
		t.Fatalf("job/%s: %v", j.Name, err)
	}
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("job/%s: completionMode %v, want Indexed (JOB_COMPLETION_INDEX is the shard's I)", j.Name, spec.CompletionMode)
	}
	for name, got := range map[string]*int32{"completions": spec.Completions, "parallelism": spec.Parallelism} {
		if got == nil || int(*got) != n {
			t.Errorf("job/%s: %s %v, want %d, the N of --shard %s", j.Name, name, deref(got), n, shard)
		}
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Errorf("job/%s: backoffLimit %v, want 0: a shard run again sends its load twice", j.Name, deref(spec.BackoffLimit))
	}
	if got := spec.Template.Spec.RestartPolicy; got != corev1.RestartPolicyNever {
		t.Errorf("job/%s: restartPolicy %q, want Never: OnFailure restarts a failed shard in place", j.Name, got)
	}
	want := map[string]string{"run": "run-1", "seed": "7", "start-at": "2026-12-01T10:00:00Z"}
	for name, v := range want {
		if got, _ := flagValue(c.Args, name); got != v {
			t.Errorf("job/%s: --%s %q after envsubst, want %q", j.Name, name, got, v)
		}
	}
	if c.Image != placeholderSamples["RETRYSAFE_IMAGE"] {
		t.Errorf("job/%s: image %q after envsubst, want %q", j.Name, c.Image, placeholderSamples["RETRYSAFE_IMAGE"])
	}

	claim, ok := km.claims[shardClaim]
	if !ok {
		t.Fatalf("ci/kubernetes creates no PersistentVolumeClaim %s", shardClaim)
	}
	if !slices.Contains(claim.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("claim %s: accessModes %v, want ReadWriteMany: the shard pods write it at once", claim.Name, claim.Spec.AccessModes)
	}
	out, _ := flagValue(c.Args, "out")
	if m, ok := claimMount(j, c, shardClaim); !ok || m.MountPath != out {
		t.Errorf("job/%s: claim %s mounted at %q, want --out %q", j.Name, shardClaim, m.MountPath, out)
	}
	km.targetSource(t, j, c)
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == shardSecret
	}) {
		t.Errorf("job/%s: no env var from Secret %s", j.Name, shardSecret)
	}
}

// TestKubernetesMergeJob checks that the merge Job merges, once, the folder that the shard
// Job wrote, of the same run, and keeps the report on the claim.
func TestKubernetesMergeJob(t *testing.T) {
	km := loadKubeManifests(t)
	shards, merge := km.job(t, "retrysafe-shards"), km.job(t, "retrysafe-merge")
	sc, mc := container(t, shards), container(t, merge)
	if len(mc.Args) == 0 || mc.Args[0] != "merge" {
		t.Fatalf("job/%s runs retrysafe %q, want retrysafe merge", merge.Name, mc.Args)
	}
	if got := merge.Spec.Completions; got == nil || *got != 1 {
		t.Errorf("job/%s: completions %v, want 1", merge.Name, deref(got))
	}
	if got := merge.Spec.BackoffLimit; got == nil || *got != 0 {
		t.Errorf("job/%s: backoffLimit %v, want 0", merge.Name, deref(got))
	}
	if got := merge.Spec.Template.Spec.RestartPolicy; got != corev1.RestartPolicyNever {
		t.Errorf("job/%s: restartPolicy %q, want Never", merge.Name, got)
	}
	for _, c := range []corev1.Container{sc, mc} {
		if !slices.Contains(c.Args, "--allow-remote") {
			t.Errorf("%s: no --allow-remote in %q: the API is a Service, not on the pod's machine", c.Name, c.Args)
		}
	}
	shardRun, _ := flagValue(sc.Args, "run")
	if got, ok := flagValue(mc.Args, "run"); !ok || got != shardRun {
		t.Errorf("job/%s: --run %q, want the shards' %q", merge.Name, got, shardRun)
	}
	if mc.Image != sc.Image {
		t.Errorf("job/%s: image %q, want the shards' %q", merge.Name, mc.Image, sc.Image)
	}
	sm, _ := claimMount(shards, sc, shardClaim)
	mm, ok := claimMount(merge, mc, shardClaim)
	if !ok {
		t.Fatalf("job/%s does not mount claim %s", merge.Name, shardClaim)
	}
	if mm.SubPath != sm.SubPath {
		t.Errorf("job/%s: mounts subPath %q of the claim, the shards write %q", merge.Name, mm.SubPath, sm.SubPath)
	}
	dirs := operands(mc.Args)
	if len(dirs) == 0 {
		t.Errorf("job/%s: merges no folder: %q", merge.Name, mc.Args)
	}
	for _, dir := range dirs {
		if dir != mm.MountPath {
			t.Errorf("job/%s: merges %q, but the claim is mounted at %q", merge.Name, dir, mm.MountPath)
		}
	}
	if dir, _ := flagValue(mc.Args, "report-dir"); !strings.HasPrefix(dir, mm.MountPath+"/") {
		t.Errorf("job/%s: --report-dir %q is not on the claim (%s): the report is lost with the pod", merge.Name, dir, mm.MountPath)
	}
	scm, skey := km.targetSource(t, shards, sc)
	if mcm, mkey := km.targetSource(t, merge, mc); mcm != scm || mkey != skey {
		t.Errorf("job/%s judges with target %s/%s, the shards ran %s/%s", merge.Name, mcm.Name, mkey, scm.Name, skey)
	}
}

// TestKubernetesTargetLoads loads the ConfigMap's target file in the environment each Job's
// container has, secrets included: envsubst must have left its ${NAME} to the pods.
func TestKubernetesTargetLoads(t *testing.T) {
	km := loadKubeManifests(t)
	for _, name := range []string{"retrysafe-shards", "retrysafe-merge"} {
		t.Run(name, func(t *testing.T) {
			j := km.job(t, name)
			c := container(t, j)
			cm, key := km.targetSource(t, j, c)
			file := filepath.Join(t.TempDir(), key)
			if err := os.WriteFile(file, []byte(cm.Data[key]), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, kv := range os.Environ() { // only the container's variables count
				if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "RETRYSAFE_") {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			var secrets []string
			for _, e := range c.Env {
				v := e.Value
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					v = "secret-" + e.ValueFrom.SecretKeyRef.Key
					secrets = append(secrets, v)
				}
				t.Setenv(e.Name, v)
			}
			tg, err := targets.Load(file)
			if err != nil {
				t.Fatalf("ConfigMap %s, key %s, in job/%s's environment: %v", cm.Name, key, name, err)
			}
			defer tg.Close()
			var headers []string
			for _, tn := range tg.Tenants {
				headers = slices.AppendSeq(headers, maps.Values(tn.Headers))
			}
			for _, s := range secrets {
				if !slices.ContainsFunc(headers, func(h string) bool { return strings.Contains(h, s) }) {
					t.Errorf("job/%s: secret value %s reaches no tenant header (headers: %q)", name, s, headers)
				}
			}
		})
	}
}

// TestKubernetesJobsUseExistingCommands checks the Jobs' command lines against the command tree.
func TestKubernetesJobsUseExistingCommands(t *testing.T) {
	km := loadKubeManifests(t)
	for _, name := range []string{"retrysafe-shards", "retrysafe-merge"} {
		j := km.job(t, name)
		c := container(t, j)
		if !slices.Equal(c.Command, []string{"retrysafe"}) {
			t.Errorf("job/%s: command %q, want [retrysafe]", name, c.Command)
		}
		checkCommand(t, "job/"+name, c.Args)
	}
}

// deref prints a nil pointer as nil.
func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

// scriptCommands returns the arguments of every retrysafe command in the shell scripts of a
// decoded YAML node, as templateCommands does for a whole file.
func scriptCommands(node any) [][]string {
	var cmds [][]string
	for _, script := range shellScripts(node, false) {
		for _, line := range strings.Split(strings.ReplaceAll(script, "\\\n", " "), "\n") {
			line = strings.TrimSpace(line)
			if m := retrysafeCall.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "#") {
				cmds = append(cmds, shellWords(m[1]))
			}
		}
	}
	return cmds
}

// withSamples returns args with the CI's placeholders replaced by placeholderSamples.
func withSamples(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = substitute(a, placeholderSamples)
	}
	return out
}

func TestShardTemplatesUseExistingCommands(t *testing.T) {
	for _, file := range shardTemplates {
		var subs []string
		for _, args := range templateCommands(t, filepath.Join("..", "..", file)) {
			checkCommand(t, file, withSamples(args))
			subs = append(subs, args[0])
		}
		for _, want := range []string{"run", "merge"} {
			if !slices.Contains(subs, want) {
				t.Errorf("%s: no `retrysafe %s` found among %q", file, want, subs)
			}
		}
	}
}

// TestShardTemplatesShardCount checks that the job running the shards starts N of them, N
// being that of its --shard: GitHub's matrix 0..N-1, GitLab's parallel.
func TestShardTemplatesShardCount(t *testing.T) {
	for _, file := range shardTemplates {
		data, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := goyaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		jobs := doc
		if gh, ok := doc["jobs"].(map[string]any); ok {
			jobs = gh
		}
		found := 0
		for name, job := range jobs {
			for _, args := range scriptCommands(job) {
				shard, ok := flagValue(args, "shard")
				if args[0] != "run" || !ok {
					continue
				}
				found++
				n, err := shardCount(substitute(shard, placeholderSamples))
				if err != nil {
					t.Errorf("%s: job %s: %v", file, name, err)
					continue
				}
				if got := startedShards(job); !slices.Equal(got, indexes(n)) {
					t.Errorf("%s: job %s starts shards %v, want %v for --shard %s", file, name, got, indexes(n), shard)
				}
			}
		}
		if found != 1 {
			t.Errorf("%s: %d jobs run `retrysafe run --shard`, want 1", file, found)
		}
	}
}

// startedShards returns the shard indexes a CI job starts: its GitHub matrix.shard list, or
// 0..parallel-1 of a GitLab parallel job (whose CI_NODE_INDEX is 1..parallel).
func startedShards(job any) []int {
	m, _ := job.(map[string]any)
	if p, ok := m["parallel"]; ok {
		n, _ := strconv.Atoi(fmt.Sprint(p))
		return indexes(n)
	}
	strategy, _ := m["strategy"].(map[string]any)
	matrix, _ := strategy["matrix"].(map[string]any)
	list, _ := matrix["shard"].([]any)
	var out []int
	for _, v := range list {
		i, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil {
			i = -1
		}
		out = append(out, i)
	}
	return out
}

// indexes returns 0..n-1.
func indexes(n int) []int {
	out := []int{}
	for i := range n {
		out = append(out, i)
	}
	return out
}

func TestShardCount(t *testing.T) {
	tests := []struct {
		in   string
		want int // 0: an error
	}{
		{"4", 4},
		{"0/4", 4},
		{"3/4", 4},
		{"4/4", 0},
		{"-1/4", 0},
		{"0", 0},
		{"${{ matrix.shard }}/4", 0},
	}
	for _, tt := range tests {
		got, err := shardCount(tt.in)
		if got != tt.want || (err != nil) != (tt.want == 0) {
			t.Errorf("shardCount(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	values := map[string]string{"A": "1", "matrix.shard": "2"}
	tests := []struct{ in, want string }{
		{"${A}-$A-${{ matrix.shard }}/4", "1-1-2/4"},
		{"${{matrix.shard}}", "2"},
		{"$AB ${B} ${{ env.A }}", "$AB ${B} ${{ env.A }}"},
	}
	for _, tt := range tests {
		if got := substitute(tt.in, values); got != tt.want {
			t.Errorf("substitute(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
