package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/reports/profile"
)

func column(name string, cells map[string]Cell) Column {
	c := Column{Name: name, Kind: KindProfile}
	for _, f := range profile.FieldOrder {
		if cell, ok := cells[f]; ok {
			c.set(f, cell)
		}
	}
	return c
}

func TestBuildMarks(t *testing.T) {
	cols := []Column{
		column("a", map[string]Cell{"mismatch_status": {Value: "422"}, "in_flight": {Value: "409"}, "expired": {Value: profile.NotProbed}, "error_policy": {Value: "replay"}}),
		column("b", map[string]Cell{"mismatch_status": {Value: "400"}, "in_flight": {Value: "500", Unsafe: "5xx to a race loser"}, "error_policy": {Value: "retry"}}),
		column("c", map[string]Cell{"mismatch_status": {Value: "422"}, "in_flight": {Value: "409"}, "expired": {Value: profile.NotProbed}}),
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
		t.Errorf("rows %v, want %s (profile.FieldOrder)", names, want)
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

// failing is a failing property with one spec whose checker found the anomalies.
func failing(name, text, failure string, kinds ...reports.Kind) reports.Property {
	var as []reports.Anomaly
	for _, k := range kinds {
		as = append(as, reports.Anomaly{Kind: k, Op: "orders", Key: "k", Message: "found " + string(k)})
	}
	return reports.Property{Name: name, Verdict: reports.Fail,
		Specs: []reports.Spec{{Text: text, Verdict: reports.Fail, Failure: failure, Anomalies: as}}}
}

// sampleRun is a run report with one property of each kind of failure. The failure texts are
// deliberately misleading: the matrix must read the kinds alone.
func sampleRun() *reports.Run {
	return &reports.Run{
		Schema: reports.SchemaVersion, Complete: true,
		Target: reports.TargetInfo{Name: "orders-api", Profile: map[string]string{
			"mismatch_status": "400", "in_flight": "status", "in_flight_status": "409", "key_forms": "bare",
			"missing_key_status": "processed", "replay_header": "Idempotent-Replayed: true"}},
		Properties: []reports.Property{
			{Name: "replay", Verdict: reports.Pass},
			failing("keys", "orders: an empty key gets 400", "a duplicate record!", reports.KindWrongStatus),
			failing("mismatch", "orders: the same key with another payload gets 400", "expected 400, got 201", reports.KindMismatchAccepted),
			failing("expiry", "an expired key is new", "a status differs", reports.KindDuplicateRecord),
			failing("error-replay", "a 5xx is replayed", "expected 502, got 201", reports.KindReplayDiffs),
			failing("race", "rounds", "2 of 20 rounds violated", reports.KindServerError, reports.KindDuplicateRecord),
			failing("load", "load", "3 business records: a duplicate", reports.KindReplayDiffs, reports.KindServerError),
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
		{"property keys", "FAIL", false},         // wrong-status: merely different, whatever the text says
		{"property mismatch", "FAIL", true},      // mismatch-accepted
		{"property expiry", "FAIL", true},        // duplicate-record
		{"property error-replay", "FAIL", false}, // replay-differs
		{"property race", "FAIL", true},          // one unsafe kind among others is enough
		{"property load", "FAIL", false},         // replay-differs and server-error only
		{"property tenancy", "skipped", false},
	}
	for _, tt := range tests {
		cell := c.Cells[tt.row]
		if cell.Value != tt.value || (cell.Unsafe != "") != tt.unsafe {
			t.Errorf("%s = %q (unsafe %q), want %q unsafe=%v", tt.row, cell.Value, cell.Unsafe, tt.value, tt.unsafe)
		}
	}
	if got := c.Cells["property race"].Unsafe; !strings.HasPrefix(got, "duplicate-record: ") {
		t.Errorf("race unsafe = %q, want it to name the kind", got)
	}
}

// A run report whose only failure is a replay that answered 200 instead of 201 (one record,
// same body) differs; one with a duplicate record is unsafe, whatever its messages say.
func TestMatrixReadsKindsNotMessages(t *testing.T) {
	run := func(p reports.Property) *reports.Run {
		return &reports.Run{Schema: reports.SchemaVersion, Complete: true, Target: reports.TargetInfo{Name: "api"},
			Properties: []reports.Property{p}}
	}
	status := FromRun("a.json", run(failing("replay", "orders: 10 sequential sends", "2 business records, a duplicate!", reports.KindReplayDiffs)))
	if cell := status.Cells["property replay"]; cell.Value != "FAIL" || cell.Unsafe != "" {
		t.Errorf("replay status difference: %+v, want a FAIL that is not unsafe", cell)
	}
	dup := FromRun("b.json", run(failing("replay", "orders: 10 sequential sends", "the status differs", reports.KindDuplicateRecord)))
	if cell := dup.Cells["property replay"]; cell.Unsafe == "" {
		t.Errorf("duplicate record: %+v, want unsafe", cell)
	}
	old := FromRun("c.json", run(failing("race", "rounds", "Expected <int>: 2 to equal <int>: 1 business records")))
	if cell := old.Cells["property race"]; cell.Unsafe != "" || !strings.Contains(cell.Note, "no anomaly kinds") {
		t.Errorf("a report without kinds: %+v, want a difference with a note", cell)
	}
}

func TestLoadTellsFilesApart(t *testing.T) {
	dir := t.TempDir()
	runFile := filepath.Join(dir, "report.json")
	if err := reports.WriteJSON(runFile, sampleRun()); err != nil {
		t.Fatal(err)
	}
	profFile := filepath.Join(dir, "profile.json")
	prof := &profile.Profile{Target: profile.TargetInfo{Name: "stripe"}, Fields: []profile.Field{{Name: "mismatch_status", Value: "400"}}}
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
	prof := &profile.Profile{Target: profile.TargetInfo{Name: "orders-api", Instances: []string{"http://127.0.0.1:8080"}}, Fields: []profile.Field{
		{Name: "mismatch_status", Value: "201", Unsafe: "another request's response replayed"},
		{Name: "replay_header", Value: "X-Odd: a|b"},
	}}
	table := Build([]Column{FromRun("report.json", sampleRun()), FromProfile("p.json", prof)})
	var md bytes.Buffer
	table.WriteMarkdown(&md)
	for _, want := range []string{"| behaviour | orders-api | http://127.0.0.1:8080 |", "| `mismatch_status` | 400 | **✗ 201** |",
		`X-Odd: a\|b`, "| `property race` | **✗ FAIL** | – |", "**Unsafe (4):**",
		"- ✗ http://127.0.0.1:8080: mismatch_status = 201: another request's response replayed",
		"- http://127.0.0.1:8080: profile p.json (target orders-api)"} {
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

// TestColumnNames: a column is named by its label, else by its target's first instance URL,
// else by the target's name; names that repeat are told apart by file name, then by number.
func TestColumnNames(t *testing.T) {
	prof := func(name string, urls ...string) *profile.Profile {
		return &profile.Profile{Target: profile.TargetInfo{Name: name, Instances: urls}}
	}
	run := &reports.Run{Target: reports.TargetInfo{Name: "orders", Instances: []string{"http://127.0.0.1:9000", "http://127.0.0.1:9001"}}}
	cols := []Column{
		FromProfile("a/before.json", prof("orders", "http://127.0.0.1:8080")),
		FromProfile("b/after.json", prof("orders", "http://127.0.0.1:8080")),
		FromProfile("c/after.json", prof("orders", "http://127.0.0.1:8080")),
		FromProfile("old.json", prof("legacy")),
		FromRun("report.json", run),
		FromProfile("stripe.json", prof("stripe", "https://api.stripe.com")).WithLabel("Stripe test mode"),
	}
	var got []string
	for _, c := range Build(cols).Columns {
		got = append(got, c.Name)
	}
	want := []string{"http://127.0.0.1:8080 (before.json)", "http://127.0.0.1:8080 (after.json)", "http://127.0.0.1:8080 (after.json) (2)",
		"legacy", "http://127.0.0.1:9000", "Stripe test mode"}
	if !slices.Equal(got, want) {
		t.Errorf("column names\n%q\nwant\n%q", got, want)
	}
	if cols[0].Name != "http://127.0.0.1:8080" {
		t.Errorf("Build renamed its input column: %q", cols[0].Name)
	}
}
