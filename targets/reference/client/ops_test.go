package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseOps(t *testing.T) {
	ops, err := ParseOps([]byte(`[
  {"ref": "a", "params": {"amount": 12345678901234567890}},
  {"ref": "a"},
  {"ref": "b", "params": {"currency": "usd", "note": {"x": [1, 2]}}}
]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0].Ref != "a" || ops[1].Ref != "a" || ops[2].Ref != "b" || ops[1].Params != nil {
		t.Fatalf("ParseOps = %+v", ops)
	}
	created := time.Date(2030, 1, 2, 3, 4, 5, 600, time.UTC)
	for i, want := range []string{
		`{"amount":12345678901234567890,"created_at":"2030-01-02T03:04:05.0000006Z","currency":"eur","ref":"a"}`,
		`{"amount":1000,"created_at":"2030-01-02T03:04:05.0000006Z","currency":"eur","ref":"a"}`,
		`{"amount":1000,"created_at":"2030-01-02T03:04:05.0000006Z","currency":"usd","note":{"x":[1,2]},"ref":"b"}`,
	} {
		got, err := ops[i].body(created)
		if err != nil || string(got) != want {
			t.Errorf("entry %d: body %s (%v), want %s", i+1, got, err, want)
		}
	}
}

func TestParseOpsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty file", ``, ":1: the JSON ends early"},
		{"not an array", `{"ref": "a"}`, `:1: found {: want a JSON array`},
		{"empty array", `[]`, ": no operations: the array is empty"},
		{"syntax", "[\n{\"ref\": \"a\",}\n]", ":2: invalid JSON"},
		{"truncated", "[\n{\"ref\": \"a\"}", ":2: the JSON ends early"},
		{"trailing data", `[{"ref": "a"}] [`, ":1: data after the array"},
		{"no ref", "[\n  {\"ref\": \"a\"},\n  {\"params\": {}}\n]", `:3: entry 2: ref: missing or empty`},
		{"unknown field", "[{\"ref\": \"a\", \"parms\": {}}]", `:1: entry 1: unknown field "parms" (an entry is {"ref": "...", "params": {...}})`},
		{"params.ref", `[{"ref": "a", "params": {"ref": "b"}}]`, `entry 1: params.ref: not allowed: the ref is the entry's "ref" field`},
		{"params.created_at", `[{"ref": "a", "params": {"created_at": "x"}}]`, "entry 1: params.created_at: not allowed"},
		{"params not an object", `[{"ref": "a", "params": [1]}]`, "entry 1: cannot unmarshal array"},
	} {
		_, err := ParseOps([]byte(tc.data))
		if err == nil || !strings.HasPrefix(err.Error(), ":") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error starting with ':' and containing %q", tc.name, err, tc.want)
		}
	}
}

func TestReadOpsFileNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ops.json")
	if err := os.WriteFile(path, []byte("[\n{\"ref\": \"\"}]"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadOpsFile(path)
	if want := path + ":2: entry 1: ref: missing or empty"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ReadOpsFile: %v, want %q...", err, want)
	}
	if _, err := ReadOpsFile(path + ".missing"); err == nil || !strings.Contains(err.Error(), "ops.json.missing") {
		t.Errorf("ReadOpsFile of a missing file: %v, want the path in the error", err)
	}
}

func TestOperationsParamsSurviveAJSONRoundTrip(t *testing.T) {
	ops, err := ParseOps([]byte(`[{"ref": "a", "params": {"amount": 1e3}}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ops[0].Params)
	if string(b) != `{"amount":1e3}` {
		t.Errorf("params %s, want the amount's digits as written (1e3)", b)
	}
}
