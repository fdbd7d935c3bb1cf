package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

func TestJudgeKeyForms(t *testing.T) {
	q := sent(1, 201, `{"id":"o1"}`)
	replay := sent(2, 201, `{"id":"o1"}`, "Idempotent-Replayed", "true")
	own := sent(2, 201, `{"id":"o2"}`)
	tests := []struct {
		name      string
		q         pair
		records   int
		counted   bool
		forms     string
		deviation string
	}{
		{"one record", pair{q, own}, 1, true, "quoted,bare", ""},
		{"a replay marker, no count", pair{q, replay}, 0, false, "quoted,bare", ""},
		{"the same answer, no count", pair{q, sent(2, 201, `{"id":"o1"}`)}, 0, false, "quoted,bare", ""},
		{"two records: distinct keys", pair{q, own}, 2, true, "bare", "quoted and bare forms are distinct keys (the draft expects one key)"},
		{"no count, other answers", pair{q, own}, 0, false, "bare", "nothing shows that the quoted and bare forms are one key"},
		{"the quoted form refused", pair{sent(1, 400, `{}`), own}, 1, true, "bare", "the quoted (RFC 8941) form of a key is refused (400)"},
		{"the bare form refused", pair{q, sent(2, 400, `{}`)}, 1, true, "quoted", "the bare form of a key is refused (400)"},
		{"neither", pair{sent(1, 400, `{}`), sent(2, 400, `{}`)}, 0, true, "", ""},
		{"no answer", pair{q, noAnswer(2)}, 1, true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := JudgeKeyForms(tt.q.A, tt.q.B, tt.records, tt.counted, targets.Ignore{})
			var forms []string
			for _, x := range f.Forms {
				forms = append(forms, string(x))
			}
			if got := strings.Join(forms, ","); got != tt.forms || !strings.HasPrefix(f.Deviation, tt.deviation) || (tt.deviation == "") != (f.Deviation == "") {
				t.Errorf("forms %q deviation %q, want %q %q (note %q)", got, f.Deviation, tt.forms, tt.deviation, f.Note)
			}
			if f.Note == "" || f.OneKey() != slices.Equal(forms, []string{"quoted", "bare"}) {
				t.Errorf("note %q, one key %v", f.Note, f.OneKey())
			}
		})
	}
}

// pair is a quoted attempt and a bare one.
type pair struct{ A, B history.Attempt }
