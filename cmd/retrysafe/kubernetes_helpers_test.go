package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The helpers of the Kubernetes and sharded-CI template tests (kubernetes_test.go): reading,
// substituting and strictly decoding ci/kubernetes, and reading command lines.

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
