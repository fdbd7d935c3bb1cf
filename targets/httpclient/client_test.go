package httpclient_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

func get(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestTooManyRequests(t *testing.T) {
	inAnHour := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name        string
		answers     []string // "429 <Retry-After>" or a status alone
		retries     int
		wantStatus  []int
		wantAtLeast time.Duration
	}{
		{"waited twice then created", []string{"429 1", "429 " + inAnHour, "201"}, 2, []int{429, 429, 201}, 100 * time.Millisecond},
		{"gives up after the limit", []string{"429 0", "429 0", "429 0", "201"}, 2, []int{429, 429, 429}, 0},
		{"no Retry-After is not re-sent", []string{"429", "201"}, 2, []int{429}, 0},
		{"re-sends disabled", []string{"429 0", "201"}, -1, []int{429}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				status, after, _ := strings.Cut(tt.answers[n.Add(1)-1], " ")
				if after != "" {
					w.Header().Set("Retry-After", after)
				}
				var code int
				fmt.Sscan(status, &code)
				w.WriteHeader(code)
			}))
			defer srv.Close()
			c := httpclient.New(httpclient.Options{Max429Wait: 50 * time.Millisecond, Max429Retries: tt.retries})
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"a":1}`))
			req.Header.Set("Idempotency-Key", "k")

			start := time.Now()
			last := c.Do(context.Background(), req, httpclient.Meta{Key: "k"})
			elapsed := time.Since(start)

			var got []int
			for _, a := range c.History().ByKey("k") {
				got = append(got, a.Status)
				if string(a.ReqBody) != `{"a":1}` {
					t.Errorf("attempt %d sent body %q, want the original", a.Seq, a.ReqBody)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantStatus) {
				t.Errorf("recorded statuses %v, want %v", got, tt.wantStatus)
			}
			if int(n.Load()) != len(tt.wantStatus) {
				t.Errorf("server saw %d requests, want %d", n.Load(), len(tt.wantStatus))
			}
			if want := tt.wantStatus[len(tt.wantStatus)-1]; last.Status != want {
				t.Errorf("Do returned status %d, want %d", last.Status, want)
			}
			if elapsed < tt.wantAtLeast || elapsed > 900*time.Millisecond {
				t.Errorf("took %s, want between %s and 900ms (waits capped at 50ms)", elapsed, tt.wantAtLeast)
			}
		})
	}
}

func TestTooManyRequestsRespectsDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c := httpclient.New(httpclient.Options{Max429Wait: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	a := c.Do(ctx, get(t, srv.URL), httpclient.Meta{})
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Do took %s; a wait past the deadline should not be started", d)
	}
	if c.History().Len() != 1 || !strings.Contains(a.Note, "deadline") {
		t.Errorf("history len %d, note %q; want 1 attempt noting the deadline", c.History().Len(), a.Note)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"2", 2 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"99999999999999", (1 << 30) * time.Second, true},
	}
	for _, tt := range tests {
		got, ok := httpclient.RetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("RetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var followed atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/from", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/to", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) { followed.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := httpclient.New(httpclient.Options{})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/from", strings.NewReader("x"))
	a := c.Do(context.Background(), req, httpclient.Meta{})
	if a.Status != http.StatusTemporaryRedirect || a.RespHeader.Get("Location") != "/to" || a.Outcome != history.OK {
		t.Errorf("got status %d, Location %q, outcome %s; want 307, /to, ok", a.Status, a.RespHeader.Get("Location"), a.Outcome)
	}
	if followed.Load() != 0 || c.History().Len() != 1 {
		t.Errorf("redirect followed %d times, %d attempts recorded; want 0 and 1", followed.Load(), c.History().Len())
	}
}

func TestBodyCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 32<<10))
		if r.URL.Path == "/sized" {
			w.Write(chunk[:10<<10])
			return
		}
		for r.Context().Err() == nil { // endless, until the client goes away
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := httpclient.New(httpclient.Options{MaxBody: 1024, Timeout: 5 * time.Second})
	for _, path := range []string{"/sized", "/endless"} {
		start := time.Now()
		a := c.Do(context.Background(), get(t, srv.URL+path), httpclient.Meta{})
		if len(a.RespBody) != 1024 || !a.Truncated || a.Outcome != history.OK {
			t.Errorf("%s: body %d bytes, truncated %v, outcome %s; want 1024, true, ok", path, len(a.RespBody), a.Truncated, a.Outcome)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s", path, d)
		}
	}
}

func TestTimeoutIsUnknown(t *testing.T) {
	srv := startRaw(t, func(conn net.Conn, br *bufio.Reader) {
		http.ReadRequest(br)
		io.Copy(io.Discard, br) // never answer
	})
	const timeout = 300 * time.Millisecond
	c := httpclient.New(httpclient.Options{Timeout: timeout})
	start := time.Now()
	a := c.Do(context.Background(), get(t, srv.URL), httpclient.Meta{})
	d := time.Since(start)
	if a.Outcome != history.Unknown || a.Err == "" {
		t.Errorf("outcome %s, err %q; want unknown with an error", a.Outcome, a.Err)
	}
	if d < timeout || d > timeout+time.Second {
		t.Errorf("took %s, want about %s", d, timeout)
	}
}

func TestCutBodyIsUnknown(t *testing.T) {
	srv := startRaw(t, func(conn net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err == nil {
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
		}
	})
	c := httpclient.New(httpclient.Options{})
	a := c.Do(context.Background(), get(t, srv.URL), httpclient.Meta{})
	if a.Outcome != history.Unknown || a.Status != 200 || string(a.RespBody) != "0123456789" || !strings.Contains(a.Err, "unexpected EOF") {
		t.Errorf("outcome %s, status %d, body %q, err %q; want unknown, 200, the 10 bytes, unexpected EOF", a.Outcome, a.Status, a.RespBody, a.Err)
	}
}

func TestNotSentIsFailed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()

	c := httpclient.New(httpclient.Options{Timeout: 2 * time.Second})
	for name, a := range map[string]history.Attempt{
		"refused":  c.Do(context.Background(), get(t, refused), httpclient.Meta{}),
		"canceled": c.Do(canceled, get(t, srv.URL), httpclient.Meta{}),
	} {
		if a.Outcome != history.Failed || a.Err == "" {
			t.Errorf("%s: outcome %s, err %q; want failed with an error", name, a.Outcome, a.Err)
		}
	}
}

func TestRedaction(t *testing.T) {
	const secret = "s3cr3t-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "sess-42"})
		fmt.Fprintf(w, `{"auth":%q,"key":%q}`, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
	}))
	defer srv.Close()
	h := history.New(history.NewRedactor([]string{secret}, []string{"x-api-key"}))
	c := httpclient.New(httpclient.Options{History: h})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders?token="+secret, strings.NewReader(`{"token":"`+secret+`"}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("X-Api-Key", "api-key-77")
	a := c.Do(context.Background(), req, httpclient.Meta{Key: "k"})
	if a.Status != 200 {
		t.Fatalf("status %d, err %q", a.Status, a.Err)
	}
	for _, out := range []string{fmt.Sprintf("%#v", a), a.String(), fmt.Sprintf("%#v", h.All())} {
		for _, leak := range []string{secret, "api-key-77", "sess-42"} {
			if strings.Contains(out, leak) {
				t.Errorf("output contains %q:\n%s", leak, out)
			}
		}
	}
}

func TestConcurrentDo(t *testing.T) {
	var conns, handled atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	const n = 16
	c := httpclient.New(httpclient.Options{MaxIdleConnsPerHost: n})
	defer c.CloseIdle()
	if err := c.Warm(context.Background(), srv.URL, "/healthz", n); err != nil {
		t.Fatal(err)
	}
	if got := conns.Load(); got != n {
		t.Errorf("Warm opened %d connections, want %d", got, n)
	}
	warmHandled := handled.Load()

	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader(`{}`))
			key := fmt.Sprintf("k-%d", i)
			req.Header.Set("Idempotency-Key", key)
			<-release
			c.Do(context.Background(), req, httpclient.Meta{Key: key})
		}()
	}
	close(release)
	wg.Wait()

	if got := handled.Load() - warmHandled; got != n {
		t.Errorf("server handled %d requests, want %d", got, n)
	}
	seqs := make(map[int64]bool)
	for _, a := range c.History().All() {
		seqs[a.Seq] = true
		if a.Outcome != history.OK || a.Status != http.StatusCreated {
			t.Errorf("attempt %d: outcome %s status %d", a.Seq, a.Outcome, a.Status)
		}
	}
	if len(seqs) != n || c.History().Len() != n {
		t.Errorf("%d distinct Seqs, %d attempts; want %d of each (Warm is not recorded)", len(seqs), c.History().Len(), n)
	}
	if got := conns.Load(); got > n {
		t.Errorf("%d connections after the burst, want the %d warmed ones reused", got, n)
	}
}

func TestWarmTooMany(t *testing.T) {
	c := httpclient.New(httpclient.Options{MaxIdleConnsPerHost: 2})
	if err := c.Warm(context.Background(), "http://127.0.0.1:1", "/healthz", 3); err == nil {
		t.Error("Warm(3) with MaxIdleConnsPerHost 2 succeeded, want an error")
	}
}

// TestURLCredentials: credentials in the URL go as Basic authentication (as with
// http.Client), an explicit Authorization header wins, and the password never reaches the
// history, also not through a transport error naming the URL.
func TestURLCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		fmt.Fprintf(w, "%s|%s|%s", user, pass, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	c := httpclient.New(httpclient.Options{History: history.New(history.NewRedactor([]string{"pw-9876"}, nil))})
	withCreds := strings.Replace(srv.URL, "http://", "http://ann:pw-9876@", 1)
	if a := c.Do(context.Background(), get(t, withCreds), httpclient.Meta{}); a.Status != 200 || !strings.HasPrefix(string(a.RespBody), "ann|") {
		t.Errorf("URL credentials: status %d, body %q, err %q", a.Status, a.RespBody, a.Err)
	}
	req := get(t, withCreds)
	req.Header.Set("Authorization", "Bearer tok-1234")
	if a := c.Do(context.Background(), req, httpclient.Meta{}); a.Status != 200 || !strings.HasPrefix(string(a.RespBody), "||") {
		t.Errorf("explicit Authorization: status %d, body %q", a.Status, a.RespBody)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://ann:pw-9876@" + ln.Addr().String() + "/orders"
	ln.Close()
	a := c.Do(context.Background(), get(t, refused), httpclient.Meta{})
	if !strings.HasPrefix(a.Err, `Get "http://ann:`) || strings.Contains(a.Err, "pw-9876") || !strings.Contains(a.Err, "/orders") {
		t.Errorf("transport error %q: want Get \"URL\" without the password, as http.Client writes it", a.Err)
	}
}
