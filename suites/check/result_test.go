package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
)

func dup(key string, seqs ...int64) reports.Anomaly {
	return reports.Anomaly{Kind: reports.KindDuplicateRecord, Op: testOp, Key: key, Seqs: seqs,
		Message: "2 business records for orders ref " + key + ", want 1: it was executed more than once"}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want reports.Verdict
	}{
		{"nothing found", Result{}, reports.Pass},
		{"an anomaly outweighs an unknown reason and a skip", Result{Anomalies: []reports.Anomaly{dup("a")}, Unknown: []string{"x"}, Skip: "y"}, reports.Fail},
		{"an unknown reason outweighs a skip", Result{Unknown: []string{"x"}, Skip: "y"}, reports.Unknown},
		{"skipped", Skipf("the target declares no %s", "retention"), reports.Skipped},
		{"unknown", Unknownf("no request was sent"), reports.Unknown},
	}
	for _, tt := range tests {
		if got := tt.r.Verdict(); got != tt.want {
			t.Errorf("%s: verdict = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestMerge(t *testing.T) {
	r := Result{Anomalies: []reports.Anomaly{dup("a")}}
	r.Merge(Unknownf("round 2 got no answer"))
	r.Merge(Skipf("first skip"))
	r.Merge(Result{Anomalies: []reports.Anomaly{dup("b")}, Unknown: []string{"round 4 got no answer"}, Skip: "second skip"})
	if got, want := kinds(r.Anomalies), []string{"duplicate-record a", "duplicate-record b"}; !slices.Equal(got, want) {
		t.Errorf("anomalies = %q, want %q", got, want)
	}
	if want := []string{"round 2 got no answer", "round 4 got no answer"}; !slices.Equal(r.Unknown, want) {
		t.Errorf("unknown = %q, want %q", r.Unknown, want)
	}
	if r.Skip != "first skip" {
		t.Errorf("skip = %q, want the first one", r.Skip)
	}
	var empty Result
	empty.Merge(Result{})
	if empty.Verdict() != reports.Pass {
		t.Errorf("merging nothing = %s, want pass", empty.Verdict())
	}
}

func TestMessage(t *testing.T) {
	many := Result{Unknown: []string{"ignored while there are anomalies"}}
	for i := range MaxMessageAnomalies + 5 {
		many.Anomalies = append(many.Anomalies, dup(fmt.Sprint("k", i), int64(i+1)))
	}
	lines := strings.Split(many.Message(), "\n")
	if len(lines) != MaxMessageAnomalies+1 {
		t.Fatalf("message has %d lines, want %d:\n%s", len(lines), MaxMessageAnomalies+1, many.Message())
	}
	if want := "duplicate-record: 2 business records for orders ref k0, want 1: it was executed more than once (attempts #1)"; lines[0] != want {
		t.Errorf("first line = %q, want %q", lines[0], want)
	}
	if got, want := lines[MaxMessageAnomalies], "... and 5 more"; got != want {
		t.Errorf("last line = %q, want %q", got, want)
	}
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"anomalies with their attempts", Result{Anomalies: []reports.Anomaly{dup("a", 1, 2), dup("b")}},
			"duplicate-record: 2 business records for orders ref a, want 1: it was executed more than once (attempts #1, #2)\n" +
				"duplicate-record: 2 business records for orders ref b, want 1: it was executed more than once"},
		{"exactly the maximum", Result{Anomalies: slices.Repeat([]reports.Anomaly{dup("a")}, MaxMessageAnomalies)},
			strings.TrimSuffix(strings.Repeat(dup("a").String()+"\n", MaxMessageAnomalies), "\n")},
		{"unknown reasons", Result{Unknown: []string{"the first send got no answer", "the observer failed"}, Skip: "x"},
			"the first send got no answer\nthe observer failed"},
		{"skipped", Skipf("the target declares fewer than two tenants"), "the target declares fewer than two tenants"},
		{"pass", Result{}, ""},
	}
	for _, tt := range tests {
		if got := tt.r.Message(); got != tt.want {
			t.Errorf("%s: message\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

func TestKeys(t *testing.T) {
	r := Result{Anomalies: []reports.Anomaly{dup("a"), dup("b"), dup("a"), {Kind: reports.KindWrongStatus, Message: "no key"}, dup("c"), dup("d")}}
	tests := []struct {
		n    int
		want []string
	}{
		{0, nil},
		{1, []string{"a"}},
		{3, []string{"a", "b", "c"}},
		{10, []string{"a", "b", "c", "d"}},
	}
	for _, tt := range tests {
		if got := r.Keys(tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Keys(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
