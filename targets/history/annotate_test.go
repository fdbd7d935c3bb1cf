package history_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// The annotator sees every attempt, compact ones included, never an observed event; what it sets
// is stored whole, redacted like the rest, and shown in the transcript.
func TestAnnotator(t *testing.T) {
	h := history.New(history.NewRedactor([]string{"s3cret"}, nil))
	var seen []string
	h.SetAnnotator(func(a *history.Attempt) {
		seen = append(seen, a.Key)
		a.Reference = "/ops/" + a.Key
		a.Current = &history.Read{URL: "/things/1", At: a.End.Add(2 * time.Millisecond), Status: 200, Body: []byte(`{"token":"s3cret"}`)}
	})
	now := time.Now()
	ok := history.Attempt{Op: "orders", Key: "k1", Method: "POST", URL: "http://127.0.0.1/v1", Status: 202, Outcome: history.OK,
		RespHeader: http.Header{"Location": {"/ops/k1"}}, Start: now, End: now.Add(time.Millisecond)}
	got := h.Add(ok)
	if got.Reference != "/ops/k1" || got.Current == nil || strings.Contains(string(got.Current.Body), "s3cret") {
		t.Errorf("stored attempt: reference %q, current %+v", got.Reference, got.Current)
	}
	text := got.String()
	for _, want := range []string{"! operation reference: /ops/k1", "! fresh read of GET /things/1 at +2ms: 200 OK", "[REDACTED]"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
	stop := h.Compact(history.CompactOptions{})
	ok.Key = "k2"
	h.Add(ok)
	stop()
	h.Add(history.Attempt{Method: history.MethodEvent, Key: "evt-1", Start: now, End: now})
	if strings.Join(seen, ",") != "k1,k2" {
		t.Errorf("annotated %v, want k1 and k2 (not the event)", seen)
	}
}
