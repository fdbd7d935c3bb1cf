package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// OrdersPath is the path, below Config.BaseURL, every attempt is POSTed to.
const OrdersPath = "/v1/orders"

// UserAgent is the User-Agent header of the client's requests.
const UserAgent = "retrysafe-client"

// maxResponseBody caps how much of a response body an attempt reads.
const maxResponseBody = 1 << 20

// answer is what one attempt got: a status, or no response at all.
type answer struct {
	status int
	header http.Header
	body   []byte
	// err is why there is no response (status 0): refused, reset, closed, timed out.
	err     error
	timeout bool // err is the attempt timeout
	took    time.Duration
}

// sender sends attempts, each exactly once on the wire.
type sender struct {
	tr      *http.Transport
	url     string
	timeout time.Duration
	// rewindable keeps each request's GetBody (the transport-resend mutant): net/http may then
	// re-send an attempt on its own.
	rewindable bool
	// header is sent with every attempt (Config.Header).
	header http.Header
}

// newSender returns a sender of POSTs to url, each attempt bounded by timeout.
func newSender(url string, timeout time.Duration) *sender {
	tr := &http.Transport{
		// No proxy from the environment: the API under test is the harness's, and a proxy
		// could retry on its own.
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 1, // attempts are sequential
		IdleConnTimeout:     30 * time.Second,
		// HTTP/1.1 only: one attempt is one request on one connection.
		ForceAttemptHTTP2: false,
		TLSNextProto:      map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	return &sender{tr: tr, url: url, timeout: timeout}
}

// close closes the idle connections.
func (s *sender) close() { s.tr.CloseIdleConnections() }

// send performs one attempt: key "" sends no Idempotency-Key header.
func (s *sender) send(ctx context.Context, key string, body []byte) answer {
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	// A body the Transport cannot rewind: it never re-sends this request behind the
	// client's back (see the package doc). NewRequest set GetBody for the bytes.Reader.
	if !s.rewindable {
		req.GetBody = nil
	}
	for name, values := range s.header {
		req.Header[http.CanonicalHeaderKey(name)] = values
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	// Straight to the Transport: no redirect is followed.
	resp, err := s.tr.RoundTrip(req)
	if err != nil {
		timeout := ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
		return answer{err: err, timeout: timeout, took: time.Since(start)}
	}
	defer resp.Body.Close()
	// The status decides; a body cut short (even by the attempt timeout) changes nothing.
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	return answer{status: resp.StatusCode, header: resp.Header, body: data, took: time.Since(start)}
}

// describe says in a few words what the attempt got: "503", or why there was no answer.
func (a answer) describe(timeout time.Duration) string {
	switch {
	case a.status != 0:
		return fmt.Sprint(a.status)
	case a.timeout:
		return fmt.Sprintf("no answer within %s (attempt timeout)", timeout)
	case errors.Is(a.err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(a.err, syscall.ECONNRESET):
		return "connection reset without a response"
	case errors.Is(a.err, io.EOF), errors.Is(a.err, io.ErrUnexpectedEOF),
		strings.Contains(fmt.Sprint(a.err), "server closed idle connection"):
		return "connection closed without a response"
	}
	return fmt.Sprintf("no response: %v", a.err)
}
