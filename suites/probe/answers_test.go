package probe

import (
	"slices"
	"testing"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// TestDifferences: the status as the probe words it, then the body as suites.CompareBodies
// compares it, except that text bodies differing only in the white space around them are the same.
func TestDifferences(t *testing.T) {
	tests := []struct {
		a, b history.Attempt
		want []string
	}{
		{history.Attempt{Status: 201, RespBody: []byte(`{"id":1}`)}, history.Attempt{Status: 201, RespBody: []byte(` {"id": 1}` + "\n")}, nil},
		{history.Attempt{Status: 201, RespBody: []byte(`{"id":1,"n":[1]}`)}, history.Attempt{Status: 422, RespBody: []byte(`{"id":2,"n":[1,2]}`)},
			[]string{"status 201 != 422", "$['id']", "$['n'][1]"}},
		{history.Attempt{Status: 200, RespBody: []byte("ok\n")}, history.Attempt{Status: 200, RespBody: []byte("  ok")}, nil},
		{history.Attempt{Status: 200, RespBody: []byte("ok")}, history.Attempt{Status: 200, RespBody: []byte("ko")}, []string{"body"}},
		{history.Attempt{Status: 200, RespBody: []byte(`{"id":1}`)}, history.Attempt{Status: 200, RespBody: []byte("ok")}, []string{"body"}},
	}
	for _, tt := range tests {
		if got := differences(tt.a, tt.b, targets.Ignore{}); !slices.Equal(got, tt.want) {
			t.Errorf("differences(%q, %q) = %q, want %q", tt.a.RespBody, tt.b.RespBody, got, tt.want)
		}
	}
}
