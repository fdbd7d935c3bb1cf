package targets

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unsetEnvFile uses variables that no test environment sets, in fields of every type: a URL, a
// duration, a boolean, a status, a host:port, a DSN, a command, a header and a body.
const unsetEnvFile = `name: unset-env
instances: ["${RS_TEST_UNSET_URL}", "http://127.0.0.1:${RS_TEST_UNSET_PORT}"]
retention: ${RS_TEST_UNSET_RETENTION}
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": ${RS_TEST_UNSET_AMOUNT}}'
    observer:
      sql: {driver: postgres, dsn: "${RS_TEST_UNSET_DSN}", query: "select count(*) from orders where ref = $1"}
tenants:
  - {name: alice, headers: {Authorization: "Bearer ${RS_TEST_UNSET_TOKEN}"}}
lifecycle:
  command: ["${RS_TEST_UNSET_BIN}", "--addr", "{{.Addr}}"]
  durable: ${RS_TEST_UNSET_DURABLE}
downstream: {listen: "${RS_TEST_UNSET_ADDR}"}
profile: {base: ietf, mismatch_status: "${RS_TEST_UNSET_STATUS}"}
`

// TestValidateStandsInForUnsetVariables: validate checks a file before its environment is set
// (each unset variable a warning, no problem), while Load, which a run uses, refuses it.
func TestValidateStandsInForUnsetVariables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.yaml")
	if err := os.WriteFile(path, []byte(unsetEnvFile), 0o600); err != nil {
		t.Fatal(err)
	}
	probs, warns := Validate(path)
	if len(probs) > 0 {
		t.Fatalf("validate: problems %v, want none (unset variables are warnings)", probs)
	}
	var names []string
	for _, w := range warns {
		name, _, ok := strings.Cut(strings.TrimPrefix(w.Message, "environment variable "), " is not set: checked with <")
		if !ok {
			t.Errorf("unexpected warning %s", w)
			continue
		}
		names = append(names, strings.TrimPrefix(name, "RS_TEST_UNSET_"))
	}
	want := []string{"URL", "PORT", "RETENTION", "AMOUNT", "DSN", "TOKEN", "BIN", "DURABLE", "ADDR", "STATUS"}
	if !slices.Equal(names, want) {
		t.Errorf("warned of %v, want %v (in line order)", names, want)
	}
	if len(warns) > 0 {
		mustHave := "instances[0]: warning: "
		if got := warns[0].Field + ": warning: "; got != mustHave {
			t.Errorf("first warning's field %q, want instances[0]", warns[0].Field)
		}
	}

	_, err := Load(path)
	if err == nil {
		t.Fatal("Load of a file with unset variables succeeded; a run must refuse it")
	}
	if n := len(err.(*ValidationError).Problems); n < len(want) {
		t.Errorf("Load: %d problems, want one per unset variable at least (%d): %v", n, len(want), err)
	}
	mustContainAll(t, err.Error(), "instances[0]: environment variable RS_TEST_UNSET_URL is not set (set it, or give a default: ${RS_TEST_UNSET_URL:-value})")
}

// TestValidateStandInKeepsOtherProblems: a stand-in skips only its own value's checks.
func TestValidateStandInKeepsOtherProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.yaml")
	src := "name: x\ninstances: [\"${RS_TEST_UNSET_URL}\"]\nretention: soon\noperations:\n  - name: o\n    pth: /x\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	probs, _ := Validate(path)
	var got []string
	for _, p := range probs {
		got = append(got, p.Field)
	}
	want := []string{"retention", "operations[0].path", "operations[0].pth"}
	if !slices.Equal(got, want) {
		t.Errorf("problems in fields %v, want %v: %v", got, want, probs)
	}
}

func mustContainAll(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%q lacks %q", s, sub)
		}
	}
}
