package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestJSONRoundTrip(t *testing.T) {
	odd := sampleRun()
	odd.Schema = "" // WriteJSON fills it
	odd.Properties[0].Duration = 2123456789 * time.Nanosecond
	odd.Properties[0].Specs[0].Duration = 3*time.Hour + 1
	tests := []struct {
		name string
		run  *Run
	}{
		{"sample", sampleRun()},
		{"odd durations, no schema", odd},
		{"incomplete", &Run{Schema: SchemaVersion, Incomplete: "interrupted", Properties: []Property{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "report.json")
			if err := WriteJSON(path, tt.run); err != nil {
				t.Fatal(err)
			}
			got, err := ReadJSON(path)
			if err != nil {
				t.Fatal(err)
			}
			want := *tt.run
			want.Schema = SchemaVersion
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip differs:\ngot  %+v\nwant %+v", got, &want)
			}
		})
	}
}

func TestJSONFields(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeJSON(&buf, sampleRun()); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	race := doc["properties"].([]any)[1].(map[string]any)
	spec := race["specs"].([]any)[1].(map[string]any)
	ev := spec["evidence"].(map[string]any)
	tests := []struct {
		field string
		got   any
		want  any
	}{
		{"schema", doc["schema"], "retrysafe.report/v1"},
		{"verdict", doc["verdict"], "fail"},
		{"counts.unknown", doc["counts"].(map[string]any)["unknown"], 1.0},
		{"run_id", doc["run_id"], "r-1"},
		{"exit_code", doc["exit_code"], 1.0},
		{"target.instances", len(doc["target"].(map[string]any)["instances"].([]any)), 2},
		{"race.duration_seconds", race["duration_seconds"], 8.1},
		{"race.figures", race["figures"].(map[string]any)["arrival_spread_p50"], "1.2ms"},
		{"spec.anomalies", spec["anomalies"].([]any)[0].(map[string]any)["kind"], "duplicate-record"},
		{"evidence.diff_paths", ev["diff_paths"].([]any)[0], "$.id"},
		{"evidence.counts", ev["counts"].(map[string]any)["records(orders, alice)"], 2.0},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.field, tt.got, tt.want)
		}
	}
	if _, ok := race["Duration"]; ok {
		t.Errorf("Duration leaked into JSON as nanoseconds: %v", race)
	}
}

func TestJSONEmptyRunHasPropertiesArray(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeJSON(&buf, &Run{}); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{`"properties": []`, `"verdict": "unknown"`, `"schema": "retrysafe.report/v1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("empty run JSON lacks %s:\n%s", want, got)
		}
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string
	}{
		{"no schema", `{"properties":[]}`, "schema: missing"},
		{"newer schema", `{"schema":"retrysafe.report/v2"}`, `"retrysafe.report/v2" is not supported`},
		{"bad property verdict", `{"schema":"retrysafe.report/v1","properties":[{"name":"a","verdict":"ok"}]}`,
			`properties[0].verdict: unknown verdict "ok" (known: pass, fail, unknown, skipped)`},
		{"bad spec verdict", `{"schema":"retrysafe.report/v1","properties":[{"name":"a","verdict":"pass","specs":[{"verdict":""}]}]}`,
			`properties[0].specs[0].verdict: unknown verdict ""`},
		{"not json", `{`, "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "report.json")
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadJSON(path)
			if err == nil {
				t.Fatalf("ReadJSON accepted %s", tt.json)
			}
			if got := err.Error(); !strings.HasPrefix(got, path+": ") || !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want it to start with the path and contain %q", got, tt.want)
			}
		})
	}
}

func TestReadJSONIgnoresAddedFields(t *testing.T) {
	in := `{"schema":"retrysafe.report/v1","new_field":{"x":1},"complete":true,
		"properties":[{"name":"replay","verdict":"pass","duration_seconds":1.5,"added":true}]}`
	got, err := DecodeJSON(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := 1500 * time.Millisecond; got.Properties[0].Duration != want {
		t.Errorf("duration = %v, want %v", got.Properties[0].Duration, want)
	}
}

func TestWriteJSONLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, "report.json"), sampleRun()); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := []string{"report.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("dir holds %v, want %v", got, want)
	}
}

// TestSchemaDocExample keeps the example in docs/report-schema.md readable
// and its derived fields right.
func TestSchemaDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/report-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```json\n")
	example, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatal("docs/report-schema.md has no json example")
	}
	r, err := DecodeJSON(strings.NewReader(example))
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	var derived struct {
		Verdict Verdict         `json:"verdict"`
		Counts  map[Verdict]int `json:"counts"`
	}
	if err := json.Unmarshal([]byte(example), &derived); err != nil {
		t.Fatal(err)
	}
	if got, want := derived.Verdict, r.Verdict(); got != want {
		t.Errorf("example verdict = %q, want %q", got, want)
	}
	if got, want := derived.Counts, r.Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("example counts = %v, want %v", got, want)
	}
}
