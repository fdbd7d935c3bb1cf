package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStateFileFormat(t *testing.T) {
	dir := t.TempDir()
	ops, err := ParseOps([]byte(`[{"ref": "order-1", "params": {"amount": 2000}}]`))
	if err != nil {
		t.Fatal(err)
	}
	a := newAPI(t, steps(answerWith(503)))
	if r := runClient(t.Context(), t, a, Config{StateDir: dir, Ops: ops}); r.err != nil {
		t.Fatal(r.err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "op-0001.json" {
		t.Fatalf("state directory holds %v, want op-0001.json alone (no temporary file left)", entries)
	}
	data, err := os.ReadFile(filepath.Join(dir, "op-0001.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("state file is not JSON: %v\n%s", err, data)
	}
	sent := a.attempts("order-1")
	for field, want := range map[string]any{
		"version": 1.0, "index": 1.0, "ref": "order-1", "params": map[string]any{"amount": 2000.0},
		"key": sent[0].key, "body": string(sent[0].body), "status": "done", "attempts": 2.0,
	} {
		if !equalJSON(got[field], want) {
			t.Errorf("state file field %s = %v, want %v\n%s", field, got[field], want, data)
		}
	}
	if _, ok := got["updated"].(string); !ok {
		t.Errorf("state file has no updated time:\n%s", data)
	}
}

func TestStateOfAnotherOpsListIsRefused(t *testing.T) {
	dir := t.TempDir()
	a := newAPI(t, steps())
	if r := runClient(t.Context(), t, a, Config{StateDir: dir, Ops: Operations("order", 2)}); r.err != nil {
		t.Fatal(r.err)
	}
	for _, tc := range []struct {
		name string
		ops  []Operation
		want string
	}{
		{"another ref", Operations("pay", 2), "operation 1 was ref order-1 with params {}, but the ops list's operation 1 is ref pay-1 with params {}: use a fresh --state"},
		{"other params", []Operation{{Ref: "order-1", Params: map[string]any{"amount": 5}}, {Ref: "order-2"}}, `is ref order-1 with params {"amount":5}`},
		{"a shorter list", Operations("order", 1), "holds operation 2 (ref order-2) but the ops list has 1"},
	} {
		r := runClient(t.Context(), t, a, Config{StateDir: dir, Ops: tc.ops})
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, r.err, tc.want)
		}
	}
	if n := len(a.attempts("")); n != 2 {
		t.Errorf("the API saw %d attempts, want 2: a refused state sends nothing", n)
	}
	longer := runClient(t.Context(), t, a, Config{StateDir: dir, Ops: Operations("order", 3)})
	if longer.err != nil || longer.sum.Succeeded != 3 || len(a.attempts("")) != 3 {
		t.Errorf("a longer list: %v, %+v, %d attempts; want order-3 alone sent", longer.err, longer.sum, len(a.attempts("")))
	}
}

func TestUnreadableStateFilesAreReported(t *testing.T) {
	for _, tc := range []struct {
		name, file, data, want string
	}{
		{"not JSON", "op-0001.json", "{", "unreadable"},
		{"other version", "op-0001.json", `{"version": 9, "index": 1, "ref": "order-1", "body": "{}", "status": "pending"}`, "version 9, this client reads version 1"},
		{"bad status", "op-0001.json", `{"version": 1, "index": 1, "ref": "order-1", "body": "{}", "status": "sent"}`, `status "sent"`},
		{"index differs from the name", "op-0001.json", `{"version": 1, "index": 2, "ref": "order-1", "body": "{}", "status": "pending"}`, "holds operation 2"},
		{"bad name", "op-x.json", `{}`, "not a record name"},
		{"no key", "op-0001.json", `{"version": 1, "index": 1, "ref": "order-1", "body": "{}", "status": "pending"}`, "pending operation with no key"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		a := newAPI(t, steps())
		r := runClient(t.Context(), t, a, Config{StateDir: dir})
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) || !strings.Contains(r.err.Error(), "fresh --state") {
			t.Errorf("%s: %v, want an error with %q that says what to do", tc.name, r.err, tc.want)
		}
		if n := len(a.attempts("")); n != 0 {
			t.Errorf("%s: %d attempts sent, want none", tc.name, n)
		}
	}
}

func TestKeyInMemoryStoresNoKey(t *testing.T) {
	dir := t.TempDir()
	a := newAPI(t, steps())
	if r := runClient(t.Context(), t, a, Config{StateDir: dir, Mutant: MutantKeyInMemory}); r.err != nil {
		t.Fatal(r.err)
	}
	recs, err := ReadState(dir)
	if err != nil || len(recs) != 1 || recs[0].Key != "" || recs[0].Status != StatusDone {
		t.Errorf("key-in-memory's state: %+v (%v), want one done record without key", recs, err)
	}
}
