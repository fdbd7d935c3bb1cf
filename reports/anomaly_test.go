package reports

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// Every kind is documented in docs/report-schema.md, with the unsafe column that Kind.Unsafe
// says: the matrix reads the kinds, a reader reads the table.
func TestKindsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/report-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		want := "yes"
		if !k.Unsafe() {
			want = "no"
		}
		if row := "| `" + string(k) + "` | " + want + " |"; !strings.Contains(string(doc), row) {
			t.Errorf("docs/report-schema.md has no row %q", row)
		}
		if !k.Valid() {
			t.Errorf("%s is not Valid", k)
		}
	}
	// The table lists the kinds in the order a spec's anomalies take (SortWorstFirst), as the
	// schema's text says.
	worst := slices.Clone(Kinds)
	slices.SortStableFunc(worst, func(a, b Kind) int { return worstRank(a) - worstRank(b) })
	at := -1
	for _, k := range worst {
		i := strings.Index(string(doc), "| `"+string(k)+"` |")
		if i >= 0 && i < at {
			t.Errorf("docs/report-schema.md lists %s before the kinds that precede it worst first (unsafe, then the others, each in Kinds order)", k)
		}
		at = max(at, i)
	}
	for _, k := range []Kind{KindMissingEvent, KindEventNewID, KindGhostEvent} {
		if !k.Unsafe() {
			t.Errorf("%s is not unsafe: an API's lost, doubled or ghost event costs its consumers an effect", k)
		}
	}
	if KindEventDiffers.Unsafe() {
		t.Errorf("%s is unsafe; like replay-differs it differs from what the target declares", KindEventDiffers)
	}
}
