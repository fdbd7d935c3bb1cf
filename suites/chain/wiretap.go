package chain

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// wiretap records the client's attempts as they reach the API: it listens behind the fault
// proxy the client calls (so that a cut response was still answered by the API and seen here)
// and sends each request on to the API's instance as it came, and the answer back as it went.
// Each attempt is an entry of the chain's history: the key it carried, the operation it names,
// the API's answer. When the API gives no answer (it was killed), the wiretap drops the client's
// connection, as the API's end would have. A hop's fault acts on an operation's first attempt
// through hook; while the API restarts (closed), attempts wait here instead of being refused, so
// that the client's retries reach the API that restarted.
type wiretap struct {
	s     *S
	api   *url.URL
	op    *targets.ClientOperation // how the client's requests are read
	apiOp string                   // the API's operation, for the history
	hook  func(ref string, n int, forward func() answer) answer
	tr    *http.Transport
	srv   *http.Server
	ln    net.Listener

	mu    sync.Mutex
	tries map[string]int
	shut  chan struct{} // closed while the API restarts; nil otherwise
}

// answer is what the API answered one attempt, or why it gave no answer.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// maxWiretapBody caps the bodies the wiretap reads.
const maxWiretapBody = 1 << 20

// restartWait bounds how long an attempt waits at the wiretap for the API's restart.
const restartWait = 30 * time.Second

// newWiretap starts a wiretap in front of the API instance api.
func newWiretap(s *S, api *url.URL, op *targets.ClientOperation, apiOp string) (*wiretap, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &wiretap{s: s, api: api, op: op, apiOp: apiOp, ln: ln, tries: map[string]int{},
		tr: &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: s.Settings.AttemptTimeout}}
	w.hook = func(_ string, _ int, forward func() answer) answer { return forward() }
	w.srv = &http.Server{Handler: http.HandlerFunc(w.serve), ReadHeaderTimeout: 10 * time.Second}
	go w.srv.Serve(ln)
	return w, nil
}

// addr is the wiretap's host:port.
func (w *wiretap) addr() string { return w.ln.Addr().String() }

// close stops the wiretap and drops its connections.
func (w *wiretap) close() {
	w.srv.Close()
	w.tr.CloseIdleConnections()
}

// serve records one attempt and answers it as the API did.
func (w *wiretap) serve(rw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxWiretapBody))
	ref := w.op.FirstIdentityValue(r, body)
	key, _ := w.op.KeyOf(r, body)
	w.mu.Lock()
	w.tries[ref]++
	n := w.tries[ref]
	w.mu.Unlock()
	ans := w.hook(ref, n, func() answer { return w.forward(r, body) })
	a := history.Attempt{Op: w.apiOp, Key: key, Identity: ref, Method: r.Method, URL: w.api.JoinPath(r.URL.Path).String(),
		ReqHeader: r.Header.Clone(), ReqBody: body, Status: ans.status, RespHeader: ans.header, RespBody: ans.body,
		Start: start, End: time.Now(), Outcome: history.OK, Note: "the client's attempt, as it reached the API"}
	if ans.err != nil {
		a.Outcome, a.Err = history.Unknown, ans.err.Error()
	}
	w.s.History.Add(a)
	if ans.err != nil {
		panic(http.ErrAbortHandler) // the API's end dropped the connection: so does the client's
	}
	for name, vals := range ans.header {
		rw.Header()[name] = vals
	}
	rw.WriteHeader(ans.status)
	rw.Write(ans.body)
}

// forward sends one attempt on to the API (once the API is up) and reads its answer.
func (w *wiretap) forward(r *http.Request, body []byte) answer {
	if err := w.awaitOpen(r.Context()); err != nil {
		return answer{err: err}
	}
	u := *w.api
	u.Path, u.RawQuery = w.api.JoinPath(r.URL.Path).Path, r.URL.RawQuery
	req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header = r.Header.Clone()
	resp, err := w.tr.RoundTrip(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxWiretapBody))
	if err != nil {
		return answer{err: err}
	}
	return answer{status: resp.StatusCode, header: resp.Header.Clone(), body: data}
}

// closeAPI makes later attempts wait at the wiretap (the API restarts); openAPI lets them go.
func (w *wiretap) closeAPI() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shut == nil {
		w.shut = make(chan struct{})
	}
}

func (w *wiretap) openAPI() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shut != nil {
		close(w.shut)
		w.shut = nil
	}
}

// awaitOpen waits while the API restarts.
func (w *wiretap) awaitOpen(ctx context.Context) error {
	w.mu.Lock()
	shut := w.shut
	w.mu.Unlock()
	if shut == nil {
		return nil
	}
	t := time.NewTimer(restartWait)
	defer t.Stop()
	select {
	case <-shut:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errors.New("the API did not restart in time")
	}
}
