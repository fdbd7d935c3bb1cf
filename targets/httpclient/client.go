// Package httpclient is the harness's only way to send an attempt to a target.
//
// Every attempt goes over the wire exactly once and is recorded in a
// history.History with its timing and outcome (ok / failed / unknown).
// Go's http.Transport silently re-sends a request on a broken keep-alive
// connection when it thinks the request is replayable (a GET, HEAD, OPTIONS
// or TRACE, or any request carrying Idempotency-Key or X-Idempotency-Key,
// whose body is absent or rewindable). One client.Do can then run the
// target's handler twice, which is exactly what an idempotency harness must
// never do behind its own back. Client makes that impossible by giving every
// such request a body the Transport cannot rewind; see Do.
//
// The only deliberate re-send is after a 429 with Retry-After, which is
// recorded as its own attempt. Redirects are not followed. HTTP/2 is not
// used, so that one attempt is one request on one HTTP/1.1 connection.
package httpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// Defaults used for the zero values of Options.
const (
	DefaultTimeout             = 10 * time.Second
	DefaultMaxBody             = 1 << 20
	DefaultMaxIdleConnsPerHost = 64
	DefaultMax429Wait          = 5 * time.Second
	DefaultMax429Retries       = 2
)

// UserAgent is sent when a request sets no User-Agent header.
const UserAgent = "retrysafe"

// Options configures a Client. The zero value is usable.
type Options struct {
	// Timeout bounds one attempt: dial, TLS handshake, request, response
	// headers and body. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxBody caps how many response body bytes are read; the rest is not
	// read (its connection is closed) and the attempt is marked Truncated.
	// Zero means DefaultMaxBody.
	MaxBody int64
	// TLS configures TLS connections; nil means Go's defaults.
	TLS *tls.Config
	// MaxIdleConnsPerHost is how many idle keep-alive connections are kept per
	// host, and so the most Warm can open. Zero means DefaultMaxIdleConnsPerHost.
	MaxIdleConnsPerHost int
	// History receives every attempt. Nil means a new History with a
	// Redactor that knows no secret values beyond what it learns from the
	// always-secret headers; see Client.History.
	History *history.History
	// Max429Wait caps the wait a Retry-After may impose. Zero means
	// DefaultMax429Wait; negative means no wait.
	Max429Wait time.Duration
	// Max429Retries is how many times one Do may re-send after a 429 with
	// Retry-After. Zero means DefaultMax429Retries; negative means never.
	Max429Retries int
}

// Meta labels an attempt for the history.
type Meta struct {
	// Op names the target operation, Key the idempotency key sent (for
	// History.ByKey), Tenant the caller's identity, Instance the declared
	// target instance the request goes to.
	Op, Key, Tenant, Instance string
	// Note is free text that the attempt carries into the history, e.g. "field $.amount changed".
	Note string
}

// Client sends attempts, each exactly once, and records them.
// It is safe for concurrent use.
type Client struct {
	opts Options
	tr   *http.Transport
	hc   *http.Client
	hist *history.History
}

// New returns a Client configured by opts, with defaults for zero fields.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxIdleConnsPerHost <= 0 {
		opts.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	switch {
	case opts.Max429Wait == 0:
		opts.Max429Wait = DefaultMax429Wait
	case opts.Max429Wait < 0:
		opts.Max429Wait = 0
	}
	switch {
	case opts.Max429Retries == 0:
		opts.Max429Retries = DefaultMax429Retries
	case opts.Max429Retries < 0:
		opts.Max429Retries = 0
	}
	if opts.History == nil {
		opts.History = history.New(nil)
	}
	if opts.TLS != nil {
		opts.TLS = opts.TLS.Clone()
	}
	http1 := new(http.Protocols)
	http1.SetHTTP1(true)
	dialer := &net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                  nil, // targets are reached directly, never via the environment's proxy
		DialContext:            dialer.DialContext,
		TLSClientConfig:        opts.TLS,
		TLSHandshakeTimeout:    opts.Timeout,
		MaxIdleConnsPerHost:    opts.MaxIdleConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		DisableCompression:     true, // record bodies and headers exactly as sent
		MaxResponseHeaderBytes: 1 << 20,
		Protocols:              http1,
	}
	hc := &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return &Client{opts: opts, tr: tr, hc: hc, hist: opts.History}
}

// History returns the History the Client records into.
func (c *Client) History() *history.History { return c.hist }

// CloseIdle closes every idle keep-alive connection.
func (c *Client) CloseIdle() { c.tr.CloseIdleConnections() }

// Do sends req exactly once, records the attempt in the History and returns
// it as stored (redacted, with its Seq). Do reads and closes req.Body, like
// http.Client.Do; req itself is not modified.
//
// The attempt is bounded by ctx and by Options.Timeout. Its Outcome is OK
// when a response was received and its body read (up to MaxBody), Failed
// when nothing can have been sent (no connection was ever obtained, or the
// request body could not be read), and Unknown otherwise: a timeout, a
// reset, a cut response.
//
// A 429 with a Retry-After (seconds or HTTP date) is recorded, waited for
// (at most Max429Wait, and never past ctx's deadline) and sent again as a new
// recorded attempt, at most Max429Retries times; Do returns the last attempt.
// Redirects are recorded, not followed.
//
// To keep the Transport from re-sending, the request goes with a body it
// cannot rewind (GetBody is nil). A bodiless GET, HEAD, DELETE or OPTIONS
// still goes without a body on the wire; a bodiless POST, PUT or PATCH that
// carries an idempotency header, or any other bodiless method, goes with an
// empty chunked body ("Transfer-Encoding: chunked") instead of
// "Content-Length: 0", because the latter is what net/http replays.
func (c *Client) Do(ctx context.Context, req *http.Request, meta Meta) history.Attempt {
	body, err := readRequestBody(req)
	if err != nil {
		return c.hist.Add(failedBeforeSend(req, meta, fmt.Errorf("reading the request body: %w", err)))
	}
	return c.DoBody(ctx, req, body, meta)
}

// DoBody is Do with the request body given as bytes: req.Body is neither read nor closed,
// and body is sent instead (nil or empty = no body). Neither req nor body is modified, so
// that one request may be sent by several concurrent DoBody calls; the history keeps body,
// which must not be changed afterwards.
func (c *Client) DoBody(ctx context.Context, req *http.Request, body []byte, meta Meta) history.Attempt {
	if req.URL == nil {
		return c.hist.Add(failedBeforeSend(req, meta, fmt.Errorf("request has no URL")))
	}
	var note string
	for sent := 0; ; sent++ {
		a := c.send(ctx, req, body, meta)
		wait, plan, again := c.plan429(ctx, a, sent)
		a.Note = joinNotes(meta.Note, note, a.Note, plan)
		a = c.hist.Add(a)
		if !again || !sleep(ctx, wait) {
			return a
		}
		note = fmt.Sprintf("re-send %d/%d after a 429", sent+1, c.opts.Max429Retries)
	}
}

// send performs one attempt without recording it.
func (c *Client) send(ctx context.Context, req *http.Request, body []byte, meta Meta) history.Attempt {
	a := history.Attempt{
		Op: meta.Op, Key: meta.Key, Tenant: meta.Tenant, Instance: meta.Instance,
		Method: methodOf(req), URL: req.URL.String(), ReqBody: body,
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var gotConn atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
	})
	// A shallow copy with its own header map (the values are shared: net/http's transport
	// does not modify a request, and Header.Set and Add never write into a shared value).
	out := req.WithContext(actx)
	out.Header = make(http.Header, len(req.Header)+1)
	for name, vals := range req.Header {
		out.Header[name] = vals
	}
	if _, set := out.Header["User-Agent"]; !set {
		out.Header["User-Agent"] = []string{UserAgent}
	}
	if u := req.URL.User; u != nil && out.Header.Get("Authorization") == "" {
		// What http.Client does for credentials in the URL (the transport does not).
		password, _ := u.Password()
		out.Header["Authorization"] = []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+password))}
	}
	setOnceBody(out, body)
	a.ReqHeader = out.Header

	a.Start = time.Now()
	// Straight to the transport: besides the Basic credentials above, http.Client would only
	// add a copy of the headers for redirects, which are never followed.
	resp, err := c.tr.RoundTrip(out)
	if err != nil {
		err = &url.Error{Op: urlErrorOp(a.Method), URL: req.URL.Redacted(), Err: err}
		a.End = time.Now()
		a.Err = err.Error()
		a.Outcome = history.Unknown
		if !gotConn.Load() {
			a.Outcome = history.Failed
			a.Note = "no connection was obtained: the request was not sent"
		}
		return a
	}
	RecordResponse(&a, resp, c.opts.MaxBody)
	return a
}

// RecordResponse completes an attempt with its answer: status and headers (resp is the
// attempt's alone), the body read up to maxBody bytes (a longer one is cut: Truncated, with a
// note), its hash, End, and the outcome: OK, or Unknown when the body could not be read. It
// closes resp.Body.
func RecordResponse(a *history.Attempt, resp *http.Response, maxBody int64) {
	defer resp.Body.Close()
	a.Status, a.RespHeader = resp.StatusCode, resp.Header
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	a.End = time.Now()
	if int64(len(data)) > maxBody {
		data = data[:maxBody]
		a.Truncated = true
		a.Note = joinNotes(a.Note, fmt.Sprintf("response body cut at %d bytes (MaxBody)", maxBody))
	}
	a.RespBody, a.BodyHash = data, sha256.Sum256(data)
	a.Outcome = history.OK
	if rerr != nil {
		a.Outcome = history.Unknown
		a.Err = "reading the response body: " + rerr.Error()
	}
}

// readRequestBody reads and closes req.Body; nil when there is none.
func readRequestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// setOnceBody gives r a body the Transport cannot rewind, so that it can
// never re-send r. Only a bodiless POST, PUT or PATCH without any
// idempotency header keeps http.NoBody (and so "Content-Length: 0"): net/http
// does not consider those replayable.
func setOnceBody(r *http.Request, body []byte) {
	r.GetBody = nil
	if len(body) == 0 && !replayableWhenBodiless(r) {
		r.Body, r.ContentLength = http.NoBody, 0
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
}

// replayableWhenBodiless reports, conservatively, whether net/http might
// re-send r if it had no body: any method but POST, PUT and PATCH, and any
// request with a header whose name mentions "idempotency".
func replayableWhenBodiless(r *http.Request) bool {
	switch methodOf(r) {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return true
	}
	for name := range r.Header {
		if strings.Contains(strings.ToLower(name), "idempotency") {
			return true
		}
	}
	return false
}

// failedBeforeSend is the attempt for a request that could not be sent.
func failedBeforeSend(req *http.Request, meta Meta, err error) history.Attempt {
	now := time.Now()
	a := history.Attempt{
		Op: meta.Op, Key: meta.Key, Tenant: meta.Tenant, Instance: meta.Instance,
		Method: methodOf(req), ReqHeader: req.Header.Clone(),
		Start: now, End: now, Outcome: history.Failed, Err: err.Error(),
		Note: "the request was not sent",
	}
	if req.URL != nil {
		a.URL = req.URL.String()
	}
	return a
}

// urlErrorOp is the Op of the *url.Error http.Client returns, e.g. "Post".
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	if lower := strings.ToLower(method); lower != method {
		return method[:1] + lower[1:]
	}
	return method
}

// methodOf returns r's method, GET when empty (as net/http does).
func methodOf(r *http.Request) string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	var kept []string
	for _, n := range notes {
		if n != "" {
			kept = append(kept, n)
		}
	}
	return strings.Join(kept, "; ")
}
