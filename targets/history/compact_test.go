package history_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// okAttempt is an answered attempt as the client records it.
func okAttempt(key string, status int, body string) history.Attempt {
	start := time.Now()
	return history.Attempt{
		Op: "orders", Key: key, Tenant: "alice", Instance: "127.0.0.1:1", Method: "POST",
		URL:        "http://127.0.0.1:1/v1/orders",
		ReqHeader:  http.Header{"Authorization": {"Bearer tok-secret"}, "Idempotency-Key": {key}},
		ReqBody:    []byte(`{"ref":"r"}`),
		Status:     status,
		RespHeader: http.Header{"Content-Type": {"application/json"}},
		RespBody:   []byte(body), BodyHash: sha256.Sum256([]byte(body)),
		Start: start, End: start.Add(3 * time.Millisecond), Outcome: history.OK,
	}
}

func TestCompactKeepsWhatCheckersRead(t *testing.T) {
	h := history.New(history.NewRedactor([]string{"tok-secret"}, nil))
	h.Add(okAttempt("before", 201, `{"id":"0"}`))
	stop := h.Compact(history.CompactOptions{})
	in := okAttempt("k1", 201, `{"id":"1","echo":"tok-secret"}`)
	got := h.Add(in)
	h.Add(okAttempt("k1", 201, `{"id":"1","echo":"tok-secret"}`)) // a replay: same body
	h.Add(okAttempt("k1", 409, `{"title":"Conflict"}`))           // not 2xx: kept whole
	lostOne := h.Add(history.Attempt{Key: "k2", Outcome: history.Unknown, Err: "timeout"})
	stop()
	h.Add(okAttempt("after", 201, `{"id":"9"}`))

	if !got.Compacted || got.Seq != 2 || got.ReqHeader != nil || got.ReqBody != nil {
		t.Errorf("the stored attempt = %+v, want a compact record #2 without request", got)
	}
	if got.Key != "k1" || got.Op != "orders" || got.Tenant != "alice" || got.Status != 201 ||
		got.Duration() != 3*time.Millisecond || got.BodyHash != in.BodyHash || got.URL != in.URL {
		t.Errorf("the compact record lost a field: %+v", got)
	}
	if s := string(got.RespBody); s != `{"id":"1","echo":"[REDACTED]"}` {
		t.Errorf("RespBody = %q, want it redacted", s)
	}
	if lostOne.Compacted {
		t.Error("an attempt without an answer was compacted")
	}
	var seqs []string
	for a := range h.After(0) {
		seqs = append(seqs, fmt.Sprintf("%d:%s:%v", a.Seq, a.Key, a.Compacted))
	}
	want := []string{"1:before:false", "2:k1:true", "3:k1:true", "4:k1:false", "5:k2:false", "6:after:false"}
	if !slices.Equal(seqs, want) {
		t.Errorf("After(0) = %v, want %v", seqs, want)
	}
	var later []int64
	for a := range h.After(3) {
		later = append(later, a.Seq)
	}
	if !slices.Equal(later, []int64{4, 5, 6}) {
		t.Errorf("After(3) seqs = %v, want [4 5 6]", later)
	}
	k1 := h.ByKey("k1")
	if len(k1) != 3 || k1[2].Status != 409 || k1[2].RespHeader.Get("Content-Type") == "" {
		t.Errorf("ByKey(k1) = %d attempts, want 3 with the 409 whole", len(k1))
	}
	if &k1[0].RespBody[0] != &k1[1].RespBody[0] {
		t.Error("a replay's body is stored twice")
	}
	if n := h.Len(); n != 6 || len(h.All()) != 6 {
		t.Errorf("Len = %d, All = %d, want 6", n, len(h.All()))
	}
	if s := k1[0].String(); strings.Contains(s, "tok-secret") || !strings.Contains(s, "compact") {
		t.Errorf("String of a compact record:\n%s", s)
	}
}

func TestCompactFullPredicate(t *testing.T) {
	h := history.New(nil)
	defer h.Compact(history.CompactOptions{Full: func(a history.Attempt) bool { return a.Status == 201 }})()
	if h.Add(okAttempt("a", 201, "x")).Compacted {
		t.Error("an attempt Full asked to keep whole was compacted")
	}
	if !h.Add(okAttempt("a", 409, "y")).Compacted {
		t.Error("an attempt Full did not ask to keep was kept whole")
	}
	noted := okAttempt("a", 409, "y")
	noted.Note = "re-sent after a 429"
	if h.Add(noted).Compacted {
		t.Error("an attempt with a note was compacted")
	}
}

// An observed event is kept whole by compaction, whatever Full says, even one that looks like
// an ordinary answer: its payload and headers are the evidence of the events properties.
func TestCompactKeepsEventsWhole(t *testing.T) {
	h := history.New(nil)
	defer h.Compact(history.CompactOptions{Full: func(history.Attempt) bool { return false }})()
	now := time.Now()
	ev := history.Attempt{Op: "orders", Key: "evt_1", Method: history.MethodEvent, URL: "amqp://127.0.0.1:5672/orders/order.created",
		ReqHeader: http.Header{"Message-Id": {"evt_1"}}, ReqBody: []byte(`{"id":"evt_1"}`), Status: 200,
		Start: now, End: now, Outcome: history.OK}
	got := h.Add(ev)
	if got.Compacted || !got.IsEvent() || string(got.ReqBody) != `{"id":"evt_1"}` || got.ReqHeader.Get("Message-Id") != "evt_1" {
		t.Errorf("the stored event = %+v, want it whole", got)
	}
	if all := h.ByKey("evt_1"); len(all) != 1 || all[0].Compacted {
		t.Errorf("ByKey(evt_1) = %+v", all)
	}
	if s := got.String(); !strings.Contains(s, "> EVENT amqp://") || strings.Contains(s, "< ") {
		t.Errorf("String of an event:\n%s", s)
	}
	h.Add(okAttempt("k", 201, "{}"))
	var keys []string
	for a := range h.AttemptsAfter(0) {
		keys = append(keys, a.Key)
	}
	if !slices.Equal(keys, []string{"k"}) || h.Len() != 2 || h.Attempts() != 1 {
		t.Errorf("AttemptsAfter(0) = %v, Len %d, Attempts %d; want the attempt alone, 2 entries, 1 attempt", keys, h.Len(), h.Attempts())
	}
}

// TestCompactMemory bounds the memory of a compact record of a load-like history: one
// operation in four retried with the same answer.
func TestCompactMemory(t *testing.T) {
	const n = 20000
	atts := make([]history.Attempt, n)
	for i := range atts {
		op := i - i/4
		atts[i] = okAttempt(fmt.Sprintf("rs-0123abcd-%07d", op), 201,
			fmt.Sprintf(`{"id":"ord_%024x","object":"order","ref":"rs-0123abcd-%07d","amount":1000,"currency":"eur"}`, op, op))
	}
	h := history.New(history.NewRedactor([]string{"tok-secret"}, nil))
	defer h.Compact(history.CompactOptions{})()
	before := heap()
	for _, a := range atts {
		h.Add(a)
	}
	perAttempt := float64(int64(heap())-int64(before)) / n
	runtime.KeepAlive(h)
	runtime.KeepAlive(atts)
	if perAttempt > 300 {
		t.Errorf("%.0f bytes per compact attempt, want at most 300", perAttempt)
	}
	t.Logf("%.0f bytes per compact attempt", perAttempt)
}

func heap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkAddCompact records load-like attempts compactly.
func BenchmarkAddCompact(b *testing.B) {
	h := history.New(history.NewRedactor([]string{"tok-secret"}, nil))
	defer h.Compact(history.CompactOptions{})()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		op := i - i/4
		h.Add(okAttempt(fmt.Sprintf("rs-0123abcd-%07d", op), 201,
			fmt.Sprintf(`{"id":"ord_%024x","object":"order","ref":"rs-0123abcd-%07d","amount":1000,"currency":"eur"}`, op, op)))
	}
}

// BenchmarkAddWhole records the same attempts whole.
func BenchmarkAddWhole(b *testing.B) {
	h := history.New(history.NewRedactor([]string{"tok-secret"}, nil))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		op := i - i/4
		h.Add(okAttempt(fmt.Sprintf("rs-0123abcd-%07d", op), 201,
			fmt.Sprintf(`{"id":"ord_%024x","object":"order","ref":"rs-0123abcd-%07d","amount":1000,"currency":"eur"}`, op, op)))
	}
}

func TestIsSecretHeaderForms(t *testing.T) {
	r := history.NewRedactor(nil, []string{"x-tenant-token", "X-Api-Key"})
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"Authorization", true}, {"authorization", true}, {"AUTHORIZATION", true},
		{"X-Tenant-Token", true}, {"x-tenant-token", true}, {"X-Api-Key", true}, {"x-api-key", true},
		{"Content-Type", false}, {"content-type", false}, {"X-Tenant", false}, {"X Tenant Token", false},
	} {
		if got := r.IsSecretHeader(tt.name); got != tt.want {
			t.Errorf("IsSecretHeader(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCompactLabelsFollowLearnedSecrets(t *testing.T) {
	r := history.NewRedactor(nil, nil)
	h := history.New(r)
	defer h.Compact(history.CompactOptions{})()
	if got := h.Add(okAttempt("k1", 201, "a")).Tenant; got != "alice" {
		t.Fatalf("Tenant = %q before the secret is known", got)
	}
	r.Learn("alice")
	if got := h.Add(okAttempt("k2", 201, "b")).Tenant; got != history.Redacted {
		t.Errorf("Tenant = %q after the secret was learned, want it redacted", got)
	}
}
