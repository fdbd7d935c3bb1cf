package httpclient_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// arrival is one request as the dropping server read it.
type arrival struct {
	path    string
	nth     int // 1 for the first request on its connection
	body    string
	idemKey string
}

// droppingServer answers the first request on each keep-alive connection
// and, on the second request on that same connection, reads it fully and
// closes the connection without answering: the handler ran, the response
// was lost. It records every request it read.
type droppingServer struct {
	*rawServer
	mu       sync.Mutex
	arrivals []arrival
}

func startDropping(t *testing.T) *droppingServer {
	d := &droppingServer{}
	d.rawServer = startRaw(t, func(conn net.Conn, br *bufio.Reader) {
		for nth := 1; ; nth++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return
			}
			d.mu.Lock()
			d.arrivals = append(d.arrivals, arrival{req.URL.Path, nth, string(body), req.Header.Get("Idempotency-Key") + req.Header.Get("X-Idempotency-Key")})
			d.mu.Unlock()
			if nth >= 2 {
				return // close without answering
			}
			if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"); err != nil {
				return
			}
		}
	})
	return d
}

// seen returns the arrivals of path.
func (d *droppingServer) seen(path string) []arrival {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []arrival
	for _, a := range d.arrivals {
		if a.path == path {
			out = append(out, a)
		}
	}
	return out
}

// replayCases are requests net/http's Transport considers replayable.
var replayCases = []struct {
	name, method, body, header string
}{
	{"POST with body and Idempotency-Key", http.MethodPost, `{"amount":100}`, "Idempotency-Key"},
	{"POST without body and Idempotency-Key", http.MethodPost, "", "Idempotency-Key"},
	{"PUT with body and X-Idempotency-Key", http.MethodPut, `{"amount":100}`, "X-Idempotency-Key"},
	{"GET without key", http.MethodGet, "", ""},
}

func newSecond(t *testing.T, url, method, body, header string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url+"/second", r)
	if err != nil {
		t.Fatal(err)
	}
	if header != "" {
		req.Header.Set(header, `"k-1"`)
	}
	return req
}

// TestDefaultTransportResends documents the pitfall: on a reused keep-alive
// connection that dies before the response, net/http's Transport silently
// sends the request again, and the caller sees one success.
func TestDefaultTransportResends(t *testing.T) {
	for _, tc := range replayCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startDropping(t)
			tr := http.DefaultTransport.(*http.Transport).Clone()
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr, Timeout: 5 * time.Second}

			first, err := c.Get(srv.URL + "/first")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, first.Body)
			first.Body.Close()

			resp, err := c.Do(newSecond(t, srv.URL, tc.method, tc.body, tc.header))
			if err != nil {
				t.Fatalf("Do: %v (the pitfall did not happen: has net/http changed?)", err)
			}
			resp.Body.Close()
			got := srv.seen("/second")
			if len(got) != 2 {
				t.Fatalf("handler saw /second %d times, want 2 (the documented transport re-send)", len(got))
			}
			if got[0].nth != 2 {
				t.Errorf("first /second was request %d on its connection, want 2 (a reused connection)", got[0].nth)
			}
		})
	}
}

// TestDoSendsExactlyOnce is the harness's guarantee: in the same situation
// the handler sees the request once and the attempt is Unknown.
func TestDoSendsExactlyOnce(t *testing.T) {
	for _, tc := range replayCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startDropping(t)
			c := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
			defer c.CloseIdle()
			ctx := context.Background()

			first, _ := http.NewRequest(http.MethodGet, srv.URL+"/first", nil)
			if a := c.Do(ctx, first, httpclient.Meta{Op: "warm"}); a.Outcome != history.OK {
				t.Fatalf("first request: outcome %s, err %q", a.Outcome, a.Err)
			}

			a := c.Do(ctx, newSecond(t, srv.URL, tc.method, tc.body, tc.header), httpclient.Meta{Op: "create", Key: "k-1"})
			got := srv.seen("/second")
			if len(got) != 1 {
				t.Fatalf("handler saw /second %d times, want exactly 1", len(got))
			}
			if got[0].nth != 2 {
				t.Errorf("/second was request %d on its connection, want 2 (a reused connection)", got[0].nth)
			}
			if got[0].body != tc.body {
				t.Errorf("server read body %q, want %q", got[0].body, tc.body)
			}
			if tc.header != "" && got[0].idemKey != `"k-1"` {
				t.Errorf("server read key %q, want %q", got[0].idemKey, `"k-1"`)
			}
			if a.Outcome != history.Unknown || a.Err == "" || a.Status != 0 {
				t.Errorf("attempt: outcome %s, status %d, err %q; want unknown, 0, an error", a.Outcome, a.Status, a.Err)
			}
			if n := len(c.History().ByKey("k-1")); n != 1 {
				t.Errorf("history holds %d attempts for k-1, want 1", n)
			}
		})
	}
}
