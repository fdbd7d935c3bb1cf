package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/probe"
)

func column(name string, cells map[string]Cell) Column {
	c := Column{Name: name, Kind: KindProfile}
	for _, f := range probe.FieldOrder {
		if cell, ok := cells[f]; ok {
			c.set(f, cell)
		}
	}
	return c
}

func TestBuildMarks(t *testing.T) {
	cols := []Column{
		column("a", map[string]Cell{"mismatch_status": {Value: "422"}, "in_flight": {Value: "409"}, "expired": {Value: probe.NotProbed}, "error_policy": {Value: "replay"}}),
		column("b", map[string]Cell{"mismatch_status": {Value: "400"}, "in_flight": {Value: "500", Unsafe: "5xx to a race loser"}, "error_policy": {Value: "retry"}}),
		column("c", map[string]Cell{"mismatch_status": {Value: "422"}, "in_flight": {Value: "409"}, "expired": {Value: probe.NotProbed}}),
	}
	table := Build(cols)
	got := map[string][]Mark{}
	for _, r := range table.Rows {
		for _, c := range r.Cells {
			got[r.Name] = append(got[r.Name], c.Mark)
		}
	}
	want := map[string][]Mark{
		"mismatch_status": {Same, Different, Same},
		"in_flight":       {Same, Unsafe, Same},
		"error_policy":    {Same, Different, Empty}, // a tie goes to the leftmost column
		"expired":         {NotProbed, Empty, NotProbed},
	}
	for name, marks := range want {
		if g := got[name]; len(g) != len(marks) || !equalMarks(g, marks) {
			t.Errorf("%s: marks %v, want %v", name, g, marks)
		}
	}
	var names []string
	for _, r := range table.Rows {
		names = append(names, r.Name)
	}
	if want := "mismatch_status in_flight error_policy expired"; strings.Join(names, " ") != want {
		t.Errorf("rows %v, want %s (probe.FieldOrder)", names, want)
	}
}

func equalMarks(a, b []Mark) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sampleRun is a run report with one property of each kind of failure.
func sampleRun() *reports.Run {
	statusFailure := func(want, got string) string {
		return "same key, different payload: expected status " + want + ", got:\n#7 op=orders key=k outcome=ok 1ms\n> POST http://127.0.0.1:1/v1/orders\n< " + got + " Created\n"
	}
	return &reports.Run{
		Schema: reports.SchemaVersion, Complete: true,
		Target: reports.TargetInfo{Name: "orders-api", Profile: map[string]string{
			"mismatch_status": "400", "in_flight": "status", "in_flight_status": "409", "key_forms": "bare",
			"missing_key_status": "processed", "replay_header": "Idempotent-Replayed: true"}},
		Properties: []reports.Property{
			{Name: "replay", Verdict: reports.Pass},
			{Name: "keys", Verdict: reports.Fail, Specs: []reports.Spec{{Text: "orders: an empty key gets 400", Verdict: reports.Fail,
				Failure: "empty key: expected status 400, got:\n#3 op=orders\n> POST http://127.0.0.1:1/v1/orders\n< 422 Unprocessable Entity\n"}}},
			{Name: "mismatch", Verdict: reports.Fail, Specs: []reports.Spec{{Text: "orders: the same key with another payload gets 400", Verdict: reports.Fail,
				Failure: statusFailure("400", "201")}}},
			{Name: "expiry", Verdict: reports.Fail, Specs: []reports.Spec{{Text: "an expired key is new", Verdict: reports.Fail,
				Failure: "business records of orders for ref r (tenant a, key k)\nExpected\n    <int>: 2\nto equal\n    <int>: 1"}}},
			{Name: "error-replay", Verdict: reports.Fail, Specs: []reports.Spec{{Text: "a 5xx is replayed", Verdict: reports.Fail, Failure: "expected status 502, got:\n#2\n< 201 Created\n"}}},
			{Name: "race", Verdict: reports.Fail, Specs: []reports.Spec{{Text: "rounds", Verdict: reports.Fail, Failure: "2 of 20 rounds violated"}}},
			{Name: "tenancy", Verdict: reports.Skipped, Reason: "the target declares fewer than two tenants"},
		},
	}
}

func TestFromRun(t *testing.T) {
	c := FromRun("report.json", sampleRun())
	tests := []struct {
		row, value string
		unsafe     bool
	}{
		{"in_flight", "409", false},
		{"key_forms", "[bare]", false},
		{"missing_key_status", "processed", false},
		{"property replay", "pass", false},
		{"property keys", "FAIL", false},         // a status differs: merely different
		{"property mismatch", "FAIL", true},      // a different payload got a success
		{"property expiry", "FAIL", true},        // two records where one was due
		{"property error-replay", "FAIL", false}, // a policy
		{"property race", "FAIL", true},
		{"property tenancy", "skipped", false},
	}
	for _, tt := range tests {
		cell := c.Cells[tt.row]
		if cell.Value != tt.value || (cell.Unsafe != "") != tt.unsafe {
			t.Errorf("%s = %q (unsafe %q), want %q unsafe=%v", tt.row, cell.Value, cell.Unsafe, tt.value, tt.unsafe)
		}
	}
}

func TestLoadTellsFilesApart(t *testing.T) {
	dir := t.TempDir()
	runFile := filepath.Join(dir, "report.json")
	if err := reports.WriteJSON(runFile, sampleRun()); err != nil {
		t.Fatal(err)
	}
	profFile := filepath.Join(dir, "profile.json")
	prof := &probe.Profile{Target: probe.TargetInfo{Name: "stripe"}, Fields: []probe.Field{{Name: "mismatch_status", Value: "400"}}}
	if err := prof.WriteFile(profFile); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"schema": "something/v9"}`), 0o644)
	for file, kind := range map[string]string{runFile: KindRun, profFile: KindProfile} {
		c, err := Load(file)
		if err != nil || c.Kind != kind {
			t.Errorf("Load(%s) = %s, %v; want a %s", filepath.Base(file), c.Kind, err, kind)
		}
	}
	if _, err := Load(other); err == nil || !strings.Contains(err.Error(), "neither a profile") {
		t.Errorf("Load(other.json) error %v, want neither a profile nor a run report", err)
	}
}

func TestRender(t *testing.T) {
	prof := &probe.Profile{Target: probe.TargetInfo{Name: "orders-api"}, Fields: []probe.Field{
		{Name: "mismatch_status", Value: "201", Unsafe: "another request's response replayed"},
		{Name: "replay_header", Value: "X-Odd: a|b"},
	}}
	table := Build([]Column{FromRun("report.json", sampleRun()), FromProfile("p.json", prof)})
	var md bytes.Buffer
	table.WriteMarkdown(&md)
	for _, want := range []string{"| behaviour | orders-api | orders-api (2) |", "| `mismatch_status` | 400 | **✗ 201** |",
		`X-Odd: a\|b`, "| `property race` | **✗ FAIL** | – |", "**Unsafe (4):**",
		"- ✗ orders-api (2): mismatch_status = 201: another request's response replayed"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	var page bytes.Buffer
	if err := table.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<td class="unsafe" title="unsafe: another request&#39;s response replayed">✗ 201</td>`,
		"<small>run report</small>", "<h2>Unsafe</h2>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
