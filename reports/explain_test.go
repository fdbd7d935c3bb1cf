package reports

import (
	"slices"
	"testing"
)

// TestEveryKindIsExplained keeps `retrysafe explain` and report.html's explanations complete: a
// kind added to Kinds needs its entry in explanations.go.
func TestEveryKindIsExplained(t *testing.T) {
	for _, k := range Kinds {
		e, ok := Explain(k)
		switch {
		case !ok:
			t.Errorf("kind %s has no explanation: add one to reports/explanations.go", k)
		case e.Meaning == "" || len(e.Causes) == 0 || e.Confirm == "":
			t.Errorf("kind %s: explanation lacks its meaning, causes or confirmation: %+v", k, e)
		}
	}
	seen := map[Kind]bool{}
	for _, e := range explanations {
		if !e.Kind.Valid() {
			t.Errorf("explanation of %q, which is not a kind in Kinds", e.Kind)
		}
		if seen[e.Kind] {
			t.Errorf("kind %s is explained twice", e.Kind)
		}
		seen[e.Kind] = true
		for _, c := range e.Causes {
			if c == "" {
				t.Errorf("kind %s: an empty cause", e.Kind)
			}
		}
	}
	if got := len(Explanations()); got != len(Kinds) {
		t.Errorf("Explanations() = %d entries, want one per kind (%d)", got, len(Kinds))
	}
	if _, ok := Explain("no-such-kind"); ok {
		t.Error(`Explain("no-such-kind") found an entry`)
	}
	order := make([]Kind, 0, len(Kinds))
	for _, e := range Explanations() {
		order = append(order, e.Kind)
	}
	if !slices.Equal(order, Kinds) {
		t.Errorf("Explanations() is not in Kinds order: %v", order)
	}
}
