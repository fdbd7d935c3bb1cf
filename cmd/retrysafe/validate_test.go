package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/suites/framework"
)

// TestValidateWithoutTheEnvironment: a file whose variables are not set yet validates (exit 0)
// with a warning per variable, and a run of it still stops on them (exit 2).
func TestValidateWithoutTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	file := writeTargetFile(t, dir, `name: later
instances: ["${RS_TEST_UNSET_BASE_URL}"]
retention: ${RS_TEST_UNSET_RETENTION}
lifecycle:
  command: ["${RS_TEST_UNSET_CLIENT_BIN}", "--addr", "{{.Addr}}"]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}"}'
`)
	res := execCLI(t, "validate", file)
	if res.code != exitOK {
		t.Fatalf("validate: exit %d, want 0:\n%s", res.code, res.out)
	}
	mustContain(t, "validate", res.out, file+": ok",
		file+":2: instances[0]: warning: environment variable RS_TEST_UNSET_BASE_URL is not set: checked with <RS_TEST_UNSET_BASE_URL> in its place",
		file+":3: retention: warning: environment variable RS_TEST_UNSET_RETENTION is not set",
		file+":5: lifecycle.command[0]: warning: environment variable RS_TEST_UNSET_CLIENT_BIN is not set")

	res = execCLI(t, "run", file, "--report-dir", filepath.Join(dir, "report"))
	if res.code != exitUsage {
		t.Fatalf("run: exit %d, want %d:\n%s", res.code, exitUsage, res.out)
	}
	mustContain(t, "run", res.out, file+":2: instances[0]: environment variable RS_TEST_UNSET_BASE_URL is not set (set it, or give a default")
	if _, err := os.Stat(filepath.Join(dir, "report", "report.json")); err == nil {
		t.Error("run of a file with unset variables wrote a report")
	}
}

// listed returns the property names `retrysafe list args...` prints.
func listed(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	res := execCLI(t, append([]string{"list"}, args...)...)
	if res.code != exitOK {
		t.Fatalf("list %v: exit %d:\n%s", args, res.code, res.out)
	}
	return regexp.MustCompile(`(?m)^[a-z][a-z-]*$`).FindAllString(res.out, -1), res.out
}

func TestListLabelFilter(t *testing.T) {
	var events, all []string
	for _, p := range framework.Properties() {
		all = append(all, p.Name)
		if slices.Contains(p.Labels, framework.EventsLabel) {
			events = append(events, p.Name)
		}
	}
	if got, _ := listed(t); !slices.Equal(got, all) {
		t.Errorf("list: %v, want every property %v", got, all)
	}
	if got, _ := listed(t, "--label-filter", "events"); !slices.Equal(got, events) || len(events) == 0 {
		t.Errorf("list --label-filter events: %v, want %v", got, events)
	}
	if got, _ := listed(t, "--label-filter", "property:race || property:replay"); !slices.Equal(got, []string{"replay", "race"}) {
		t.Errorf("list --label-filter 'property:race || property:replay': %v", got)
	}
	got, out := listed(t, "--label-filter", "fault:downstream && side:consumer")
	if !slices.Contains(got, "lost-ack") || !slices.Contains(got, "event-crash-after-claim") {
		t.Errorf("list --label-filter fault:downstream: %v lacks lost-ack (a spec label on the sink path) or event-crash-after-claim", got)
	}
	mustContain(t, "list --label-filter fault:downstream", out, "lost-ack\n  selects: only specs with fault:downstream\n")
	got, out = listed(t, "--label-filter", "consumer:amqp")
	if slices.Contains(got, "signature") || !slices.Contains(got, "redelivery") {
		t.Errorf("list --label-filter consumer:amqp: %v (signature is webhook only)", got)
	}
	mustContain(t, "list --label-filter consumer:amqp", out, "redelivery\n  selects: only specs labelled consumer:amqp\n")
	if got, out := listed(t, "--label-filter", "property:none"); len(got) != 0 || !strings.Contains(out, "no property has specs") {
		t.Errorf("list of a filter that selects nothing: %v\n%s", got, out)
	}
	if res := execCLI(t, "list", "--label-filter", "(("); res.code != exitUsage {
		t.Errorf("list with a malformed filter: exit %d, want %d", res.code, exitUsage)
	}
}
