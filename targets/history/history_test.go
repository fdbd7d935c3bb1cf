package history_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

func TestAddAssignsSeqAndRedacts(t *testing.T) {
	h := history.New(history.NewRedactor([]string{"tok-123"}, nil))
	in := history.Attempt{
		Op: "create", Key: "k1", Method: "POST", URL: "http://127.0.0.1/x?t=tok-123",
		ReqHeader: http.Header{"Authorization": {"Bearer tok-123"}, "X-Other": {"a tok-123 b"}},
		ReqBody:   []byte(`{"token":"tok-123"}`),
	}
	got := h.Add(in)
	if got.Seq != 1 {
		t.Errorf("Seq = %d, want 1", got.Seq)
	}
	if s := fmt.Sprintf("%#v", got); strings.Contains(s, "tok-123") {
		t.Errorf("stored attempt leaks the secret: %s", s)
	}
	if got, want := got.ReqHeader.Get("X-Other"), "a [REDACTED] b"; got != want {
		t.Errorf("X-Other = %q, want %q", got, want)
	}
	if in.ReqHeader.Get("Authorization") != "Bearer tok-123" || string(in.ReqBody) != `{"token":"tok-123"}` {
		t.Errorf("Add modified the caller's attempt: %#v", in)
	}
	if second := h.Add(in); second.Seq != 2 {
		t.Errorf("second Seq = %d, want 2", second.Seq)
	}
}

func TestByKeyAllLen(t *testing.T) {
	h := history.New(nil)
	for _, k := range []string{"a", "b", "a", "c", "a"} {
		h.Add(history.Attempt{Key: k})
	}
	if got, want := h.Len(), 5; got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
	var seqs []int64
	for _, a := range h.ByKey("a") {
		seqs = append(seqs, a.Seq)
	}
	if got, want := fmt.Sprint(seqs), "[1 3 5]"; got != want {
		t.Errorf("ByKey(a) seqs = %s, want %s", got, want)
	}
	if got := len(h.ByKey("zz")); got != 0 {
		t.Errorf("ByKey(zz) = %d attempts, want 0", got)
	}
	all := h.All()
	all[0].Key = "mutated"
	if h.All()[0].Key != "a" {
		t.Error("All returned the History's own slice")
	}
}

func TestConcurrentAdd(t *testing.T) {
	h := history.New(nil)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Add(history.Attempt{Key: fmt.Sprint(i)})
			_ = h.Len()
			_ = h.All()
		}()
	}
	wg.Wait()
	seen := make(map[int64]bool)
	for _, a := range h.All() {
		seen[a.Seq] = true
	}
	for s := int64(1); s <= n; s++ {
		if !seen[s] {
			t.Errorf("Seq %d missing", s)
		}
	}
}

func TestRedactorString(t *testing.T) {
	r := history.NewRedactor([]string{"abc", "abcdef", "", "abc"}, nil)
	tests := []struct{ in, want string }{
		{"xabcdefx", "x[REDACTED]x"},
		{"abc abcde", "[REDACTED] [REDACTED]de"},
		{"none here", "none here"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := r.Bytes(nil); got != nil {
		t.Errorf("Bytes(nil) = %q, want nil", got)
	}
}

func TestRedactorHeader(t *testing.T) {
	r := history.NewRedactor(nil, []string{"x-tenant-token"})
	h := http.Header{
		"Authorization":       {"Basic dXNlcjpwYXNz"},
		"cookie":              {"session=1"},
		"Set-Cookie":          {"a=1", "b=2"},
		"Proxy-Authorization": {"p"},
		"X-Tenant-Token":      {"acme-secret"},
		"Content-Type":        {"application/json"},
	}
	got := r.Header(h)
	for name, vals := range got {
		want := history.Redacted
		if name == "Content-Type" {
			want = "application/json"
		}
		for _, v := range vals {
			if v != want {
				t.Errorf("%s = %q, want %q", name, v, want)
			}
		}
	}
	if len(got["Set-Cookie"]) != 2 {
		t.Errorf("Set-Cookie has %d values, want 2", len(got["Set-Cookie"]))
	}
	if h.Get("Authorization") != "Basic dXNlcjpwYXNz" {
		t.Error("Header modified its argument")
	}
	var nilR *history.Redactor
	if v := nilR.Header(h).Get("Authorization"); v != history.Redacted {
		t.Errorf("nil Redactor: Authorization = %q, want redacted", v)
	}
}

func TestRedactorLearnsFromSecretHeaders(t *testing.T) {
	h := history.New(history.NewRedactor(nil, []string{"X-Tenant"}))
	a := h.Add(history.Attempt{
		ReqHeader: http.Header{
			"Authorization": {"Bearer tok-abcdef"},
			"Cookie":        {"a=cookie-one; b=cookie-two"},
			"X-Tenant":      {"tenant-acme"},
		},
		RespHeader: http.Header{"Set-Cookie": {"sid=sess-42; Path=/; HttpOnly"}},
		RespBody:   []byte("tok-abcdef cookie-one cookie-two tenant-acme sess-42 Path HttpOnly ok"),
		Err:        "bad token tok-abcdef",
	})
	if got, want := string(a.RespBody), strings.Repeat("[REDACTED] ", 5)+"Path HttpOnly ok"; got != want {
		t.Errorf("RespBody = %q, want %q", got, want)
	}
	if got, want := a.Err, "bad token [REDACTED]"; got != want {
		t.Errorf("Err = %q, want %q", got, want)
	}
	later := h.Add(history.Attempt{Note: "saw tok-abcdef again"})
	if got, want := later.Note, "saw [REDACTED] again"; got != want {
		t.Errorf("a later attempt's Note = %q, want %q", got, want)
	}
	short := h.Add(history.Attempt{ReqHeader: http.Header{"X-Tenant": {"ab"}}, RespBody: []byte("abc")})
	if got := string(short.RespBody); got != "abc" {
		t.Errorf("a %d-byte tenant was learned: body %q", len("ab"), got)
	}
}

func TestRedactorURLPassword(t *testing.T) {
	r := history.NewRedactor(nil, nil)
	got := r.URL("http://user:hunter2@127.0.0.1:8080/x")
	if strings.Contains(got, "hunter2") {
		t.Errorf("URL(...) = %q, leaks the password", got)
	}
}

func TestFormat(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := history.Attempt{
		Seq: 3, Op: "create", Key: "k-1", Method: "POST", URL: "http://127.0.0.1:8080/orders",
		ReqHeader: http.Header{"Idempotency-Key": {`"k-1"`}},
		ReqBody:   []byte(`{"amount":100}`),
		Status:    201, RespHeader: http.Header{"Content-Type": {"application/json"}},
		RespBody: []byte(strings.Repeat("é", 100)), // 200 bytes
		Start:    start, End: start.Add(1200 * time.Microsecond), Outcome: history.OK,
	}
	got := history.Format(a, 11)
	for _, want := range []string{
		"#3 op=create key=k-1 outcome=ok 1.2ms\n",
		"> POST http://127.0.0.1:8080/orders\n",
		"> Idempotency-Key: \"k-1\"\n",
		"> {\"amount\":1\n> ... (3 more bytes not shown)\n",
		"< 201 Created\n",
		"< ééééé\n< ... (190 more bytes not shown)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Format output lacks %q:\n%s", want, got)
		}
	}

	lost := history.Attempt{Method: "GET", URL: "http://127.0.0.1/", Err: "EOF", Outcome: history.Unknown}
	got = lost.String()
	for _, want := range []string{"< (no response)\n", "! error: EOF\n", "outcome=unknown"} {
		if !strings.Contains(got, want) {
			t.Errorf("String output lacks %q:\n%s", want, got)
		}
	}
}
