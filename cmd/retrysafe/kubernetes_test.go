package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	goyaml "github.com/goccy/go-yaml"
	"github.com/retrysafe/retrysafe/targets"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// kubeDir holds the Kubernetes manifests, relative to this package.
var kubeDir = filepath.Join("..", "..", "ci", "kubernetes")

// shardTemplates are the sharded CI templates, relative to the repository root. They are not in
// ciTemplates: their flag values are CI expressions (an int --seed among them) until the CI
// fills them in, and their runs need a merge, so they cannot run as written against the reference.
var shardTemplates = []string{"ci/github-actions-shards.yml", "ci/gitlab-shards.yml"}

// placeholderSamples are the values the tests give the placeholders of the manifests and the
// shard templates: envsubst's variables, the shells' variables and GitHub's ${{ }} expressions.
var placeholderSamples = map[string]string{
	"RETRYSAFE_IMAGE":    "example/retrysafe:test",
	"RETRYSAFE_RUN":      "run-1",
	"RETRYSAFE_SEED":     "7",
	"RETRYSAFE_START_AT": "2026-12-01T10:00:00Z",
	"matrix.shard":       "0",
}

// shardClaim and shardSecret are the names the manifests' comments tell users to rely on.
const (
	shardClaim  = "retrysafe-shards"
	shardSecret = "retrysafe-credentials"
)

// envsubstCall finds a documented `envsubst 'VARS' < FILE` and captures VARS and FILE.
var envsubstCall = regexp.MustCompile(`envsubst '([^']*)' < ([\w.-]+\.yaml)`)

// placeholder finds GitHub's ${{ EXPR }} and the shell's ${NAME} and $NAME, capturing the
// expression or the name.
var placeholder = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}|\$\{(\w+)\}|\$(\w+)`)

// substitute replaces the placeholders in s by values[EXPR] or values[NAME], leaving the ones
// values lacks as they are.
func substitute(s string, values map[string]string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		g := placeholder.FindStringSubmatch(m)
		if v, ok := values[g[1]+g[2]+g[3]]; ok {
			return v
		}
		return m
	})
}

// kubeManifests are the decoded objects of ci/kubernetes, by name.
type kubeManifests struct {
	jobs       map[string]*batchv1.Job
	claims     map[string]*corev1.PersistentVolumeClaim
	configMaps map[string]*corev1.ConfigMap
}

// loadKubeManifests reads ci/kubernetes/*.yaml, substitutes what the documented envsubst
// commands substitute, and decodes every document strictly by kind.
func loadKubeManifests(t *testing.T) *kubeManifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", kubeDir, err)
	}
	raw := map[string]string{}
	substituted := map[string][]string{} // file -> variables its envsubst command replaces
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raw[filepath.Base(f)] = string(data)
		for _, m := range envsubstCall.FindAllStringSubmatch(string(data), -1) {
			vars := strings.Fields(strings.NewReplacer("${", "", "}", "").Replace(m[1]))
			if prev, ok := substituted[m[2]]; ok && !slices.Equal(prev, vars) {
				t.Errorf("%s: envsubst of %s names %q, elsewhere %q", filepath.Base(f), m[2], vars, prev)
			}
			substituted[m[2]] = vars
		}
	}
	km := &kubeManifests{map[string]*batchv1.Job{}, map[string]*corev1.PersistentVolumeClaim{}, map[string]*corev1.ConfigMap{}}
	for name, text := range raw {
		vars, ok := substituted[name]
		if !ok {
			t.Errorf("%s: no comment says how to apply it (envsubst '...' < %s)", name, name)
		}
		values := map[string]string{}
		for _, v := range vars {
			if values[v], ok = placeholderSamples[v]; !ok {
				t.Fatalf("%s: envsubst replaces ${%s}, which the test has no sample value for", name, v)
			}
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(substitute(text, values), -1) {
			km.decode(t, fmt.Sprintf("%s, document %d", name, i+1), []byte(doc))
		}
	}
	// The ConfigMap's target keeps its ${NAME} for the pods; nothing else may.
	for _, obj := range []any{km.jobs, km.claims} {
		data, _ := json.Marshal(obj)
		if left := regexp.MustCompile(`\$\{\w+\}`).FindAll(data, -1); left != nil {
			t.Errorf("ci/kubernetes: %s left after envsubst: add them to its documented command", left)
		}
	}
	return km
}

// decode adds one YAML document, decoded strictly into the k8s.io/api type of its kind.
func (km *kubeManifests) decode(t *testing.T, where string, doc []byte) {
	t.Helper()
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	switch head.APIVersion + " " + head.Kind {
	case " ":
		// only comments
	case "batch/v1 Job":
		var j batchv1.Job
		decodeStrict(t, where, doc, &j)
		km.jobs[j.Name] = &j
	case "v1 PersistentVolumeClaim":
		var c corev1.PersistentVolumeClaim
		decodeStrict(t, where, doc, &c)
		km.claims[c.Name] = &c
	case "v1 ConfigMap":
		var c corev1.ConfigMap
		decodeStrict(t, where, doc, &c)
		km.configMaps[c.Name] = &c
	default:
		t.Fatalf("%s: unexpected %s %s", where, head.APIVersion, head.Kind)
	}
}

// decodeStrict decodes doc into obj, an unknown or repeated field being an error. It also
// decodes doc as kubectl sends it, converted to JSON without the types: UnmarshalStrict turns
// the number of an unquoted "--seed", 7 into the string that the API server would refuse.
func decodeStrict(t *testing.T, where string, doc []byte, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	data, err := yaml.YAMLToJSON(doc)
	if err == nil {
		err = json.Unmarshal(data, reflect.New(reflect.TypeOf(obj).Elem()).Interface())
	}
	if err != nil {
		t.Fatalf("%s: as kubectl sends it: %v", where, err)
	}
}

// job returns the named Job of the manifests.
func (km *kubeManifests) job(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	j, ok := km.jobs[name]
	if !ok {
		t.Fatalf("ci/kubernetes has no Job %s", name)
	}
	return j
}

// container returns the Job's only container.
func container(t *testing.T, j *batchv1.Job) corev1.Container {
	t.Helper()
	if n := len(j.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("job/%s has %d containers, want 1", j.Name, n)
	}
	return j.Spec.Template.Spec.Containers[0]
}

// flagValue returns the value of --name in args (--name V or --name=V) and whether it is there.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// operands returns the arguments of a command line that are neither its subcommand nor a flag
// or a flag's value. A flag takes the next word unless that is a flag or retrysafe says it is
// boolean, so that this works before the subcommand exists.
func operands(args []string) []string {
	cmd, _, _ := newRoot().Find(args[:1])
	var out []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := cmd.Flags().Lookup(name); hasValue || f != nil && f.NoOptDefVal != "" {
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
		}
	}
	return out
}

// shardCount returns the N of a --shard value, "N" or "I/N" with 0 <= I < N.
func shardCount(v string) (int, error) {
	i, n, slash := strings.Cut(v, "/")
	if !slash {
		n = i
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 1 {
		return 0, fmt.Errorf("--shard %q: N must be a positive integer", v)
	}
	if slash {
		if index, err := strconv.Atoi(i); err != nil || index < 0 || index >= count {
			return 0, fmt.Errorf("--shard %q: I must be in 0..%d", v, count-1)
		}
	}
	return count, nil
}

// claimMount returns the container's mount of the claim and whether there is one.
func claimMount(j *batchv1.Job, c corev1.Container, claim string) (corev1.VolumeMount, bool) {
	for _, v := range j.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				return m, true
			}
		}
	}
	return corev1.VolumeMount{}, false
}

// targetSource returns the ConfigMap and key that the container's --target file is mounted from.
func (km *kubeManifests) targetSource(t *testing.T, j *batchv1.Job, c corev1.Container) (*corev1.ConfigMap, string) {
	t.Helper()
	file, ok := flagValue(c.Args, "target")
	if !ok {
		t.Fatalf("job/%s: no --target in %q", j.Name, c.Args)
	}
	for _, v := range j.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		cm, ok := km.configMaps[v.ConfigMap.Name]
		if !ok {
			t.Fatalf("job/%s: volume %s mounts ConfigMap %s, which ci/kubernetes does not create", j.Name, v.Name, v.ConfigMap.Name)
		}
		for _, m := range c.VolumeMounts {
			if m.Name != v.Name {
				continue
			}
			for key := range cm.Data {
				at := key
				for _, item := range v.ConfigMap.Items {
					if item.Key == key {
						at = item.Path
					}
				}
				if path.Join(m.MountPath, at) == file {
					return cm, key
				}
			}
		}
	}
	t.Fatalf("job/%s: --target %s is no key of a mounted ConfigMap", j.Name, file)
	return nil, ""
}

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
