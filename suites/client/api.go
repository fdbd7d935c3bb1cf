package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// answer is one planned answer of the scripted API to an attempt.
type answer struct {
	// kind is check.AnswerSuccess, AnswerDrop, AnswerCut, AnswerHold, AnswerHeld, or "" for a
	// status.
	kind       string
	status     int
	retryAfter time.Duration
	// bare, when set, is the status's body instead of the declared error shape.
	bare *bareBody
	// when, when set, is a condition of the policy's retries the answer meets (met) or not: its
	// member set in the body, or removed.
	when *targets.RetryWhen
	met  bool
	// shouldRetry, when set, is the value of the policy's should-retry header the answer
	// carries ("": none, whatever the error shape declares).
	shouldRetry *string
}

// The answers a plan is made of.
var (
	success = answer{kind: check.AnswerSuccess}
	drop    = answer{kind: check.AnswerDrop}
	hold    = answer{kind: check.AnswerHold}
	held    = answer{kind: check.AnswerHeld}
	cut     = answer{kind: check.AnswerCut}
)

// status answers with a status code (and a Retry-After when ra > 0) without processing.
func status(code int, ra time.Duration) answer { return answer{status: code, retryAfter: ra} }

// plan is the answers to one operation's attempts, in order; past its end its last answer
// repeats (a success then replays the stored one).
type plan []answer

// maxRequestBody bounds the body the scripted API reads of one request.
const maxRequestBody = 1 << 20

// api is the scripted API of one scenario: a correct idempotent API that fails on purpose. It
// groups attempts into the client's logical operations as the checkers do (by their declared
// identity, never by key, and a new key after a 2xx a new operation: check.NewOperation), and
// answers the n-th attempt of the i-th identity's first operation, in the order each first
// arrived, as plans[i][n] says (an operation past the plans, or an identity's second, gets
// success; every attempt gets success once normal is set). A planned failure, and a connection
// cut before processing, is not stored; the first processing (success, drop, held) is stored
// under its key and replayed to every later attempt with that key; a key reused with another identity gets 422. Every
// non-2xx (planned, 404, 422) is written in the error shape the client declares (errors:).
// Every attempt goes into the history, with what was answered and when.
type api struct {
	client   *targets.Client
	policy   targets.RetryPolicy
	hist     *history.History
	plans    []plan
	holdFor  time.Duration // how long a hold answer waits for the client to give up
	overrunN int           // attempts of one operation after which overrun closes

	life     atomic.Int32  // which start of the client sends now (1, 2 after a restart)
	normal   atomic.Bool   // every attempt answered as a correct API answers (success, or its replay)
	requests atomic.Int64  // requests so far: the {{.Seq}} of an error answer
	recorded atomic.Int64  // requests recorded in the history so far
	poke     chan struct{} // receives (without blocking its sender) when a request is recorded
	overrun  chan struct{} // closed when an operation got more than overrunN attempts
	heldOne  chan string   // receives the key of the first held attempt
	released chan struct{} // closed by close: every held handler lets go

	mu       sync.Mutex
	latest   map[string]*apiOp // operation name + identity → its latest operation
	planned  int               // identities so far: the plan index of the next one
	stored   map[string]stored
	records  int
	seqs     []int64 // this scenario's attempts in the history
	overOnce sync.Once
	relOnce  sync.Once

	srv *http.Server
	ln  net.Listener
	url string
}

// apiOp is one logical operation as the scripted API tells them apart.
type apiOp struct {
	plan     int      // its index in plans (-1: none, an identity's second operation)
	attempts int      // attempts so far
	keys     []string // the keys its attempts carried
	answered bool     // a 2xx was decided for one of them
}

// stored is a processed request's stored answer.
type stored struct {
	identity string
	status   int
	header   http.Header
	body     []byte
}

// newAPI starts the scripted API of one scenario on 127.0.0.1 (over TLS with a certificate of
// ca when ca is not nil).
func newAPI(c *targets.Client, p targets.RetryPolicy, hist *history.History, plans []plan, ca *testCA) (*api, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &api{client: c, policy: p, hist: hist, plans: plans,
		holdFor:  p.AttemptTimeout + time.Second,
		overrunN: p.MaxAttempts + 2 + p.TransportResends,
		overrun:  make(chan struct{}), heldOne: make(chan string, 1), released: make(chan struct{}), poke: make(chan struct{}, 1),
		latest: map[string]*apiOp{}, stored: map[string]stored{},
		ln: ln, url: "http://" + ln.Addr().String()}
	a.life.Store(1)
	// HTTP/1.1 only: a dropped answer is a hijacked connection closed.
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ConnContext: countRequests}
	if ca != nil {
		a.srv.TLSConfig = ca.serverConfig()
		a.url = "https://" + ln.Addr().String()
		go a.srv.ServeTLS(ln, "", "")
	} else {
		go a.srv.Serve(ln)
	}
	return a, nil
}

// close releases every held attempt and stops the server.
func (a *api) close() {
	a.relOnce.Do(func() { close(a.released) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if a.srv.Shutdown(ctx) != nil {
		a.srv.Close()
	}
}

// decision is what the API does with one attempt.
type decision struct {
	answer   answer
	replay   *stored // the stored answer to replay
	mismatch bool    // the key belongs to another operation
	record   int     // the record number processing made (0: none)
}

// decide plans the answer to an attempt of operation id (op name + identity) with key.
func (a *api) decide(id, identity, key string) decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	op, ok := a.latest[id]
	if !ok || check.NewOperation(op.keys, op.answered, key) {
		op = &apiOp{plan: -1}
		if !ok {
			op.plan = a.planned
			a.planned++
		}
		a.latest[id] = op
	}
	n := op.attempts
	op.attempts++
	if !slices.Contains(op.keys, key) {
		op.keys = append(op.keys, key)
	}
	if n+1 > a.overrunN {
		a.overOnce.Do(func() { close(a.overrun) })
	}
	d := decision{answer: success}
	if !a.normal.Load() && op.plan >= 0 && op.plan < len(a.plans) && len(a.plans[op.plan]) > 0 {
		p := a.plans[op.plan]
		d.answer = p[min(n, len(p)-1)]
	}
	prev, have := a.stored[key]
	if key == "" {
		have = false
	}
	switch {
	case have && prev.identity != identity:
		d.mismatch = true
		return d
	case d.answer.kind == check.AnswerSuccess && have:
		d.replay = &prev
		op.answered = op.answered || prev.status < 300
		return d
	case d.answer.kind == check.AnswerSuccess || d.answer.kind == check.AnswerDrop || d.answer.kind == check.AnswerHeld:
		op.answered = op.answered || d.answer.kind == check.AnswerSuccess
		if have {
			return d // a dropped or held replay: nothing processed anew
		}
		a.records++
		d.record = a.records
	}
	return d
}

// store keeps a processed attempt's answer under its key.
func (a *api) store(key string, s stored) {
	if key == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.stored[key]; !ok {
		a.stored[key] = s
	}
}

// ServeHTTP answers one attempt as the scenario planned and records it.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := history.Attempt{Method: r.Method, URL: r.URL.RequestURI(), ReqHeader: r.Header.Clone(), Start: time.Now(),
		Life: int(a.life.Load()), Outcome: history.OK, Reused: connRequests(r) > 1}
	e := errorAnswer{n: a.requests.Add(1)}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	at.ReqBody = body
	if err != nil {
		at.Err = "reading the request body: " + err.Error()
	}
	defer func() {
		at.End = time.Now()
		rec := a.hist.Add(at)
		a.mu.Lock()
		a.seqs = append(a.seqs, rec.Seq)
		a.mu.Unlock()
		a.recorded.Add(1)
		select {
		case a.poke <- struct{}{}:
		default:
		}
	}()
	op := a.client.Operation(r.Method, r.URL.Path)
	if op == nil {
		at.Op, at.Answer = "(no operation)", check.AnswerUnknownPath
		e.msg = "no operation of the client is " + r.Method + " " + r.URL.Path
		a.writeError(w, &at, http.StatusNotFound, e)
		return
	}
	key, _ := op.KeyOf(r, body)
	identity := op.IdentityOf(r, body)
	at.Op, at.Key, at.Identity = op.Name, key, identity
	e.op, e.ref, e.key = op, op.FirstIdentityValue(r, body), key
	d := a.decide(op.Name+"\x00"+identity, identity, key)
	switch {
	case d.mismatch:
		at.Answer, e.msg = "422", "this idempotency key was used by another operation"
		a.writeError(w, &at, http.StatusUnprocessableEntity, e)
	case d.replay != nil:
		at.Answer = check.AnswerReplay
		a.write(w, &at, d.replay.status, d.replay.header, d.replay.body)
	case d.answer.kind == check.AnswerSuccess:
		s := a.render(op, r, body, key, d.record, identity)
		a.store(key, s)
		at.Answer = check.AnswerSuccess
		a.write(w, &at, s.status, s.header, s.body)
	case d.answer.kind == check.AnswerDrop:
		if d.record > 0 {
			a.store(key, a.render(op, r, body, key, d.record, identity))
		}
		at.Answer = check.AnswerDrop
		a.closeUnanswered(w, &at)
	case d.answer.kind == check.AnswerCut:
		at.Answer = check.AnswerCut
		a.closeUnanswered(w, &at)
	case d.answer.kind == check.AnswerHold:
		at.Answer = check.AnswerHold
		timer := time.NewTimer(a.holdFor)
		defer timer.Stop()
		select {
		case <-r.Context().Done():
		case <-timer.C:
		case <-a.released:
		}
		a.closeUnanswered(w, &at)
	case d.answer.kind == check.AnswerHeld:
		if d.record > 0 {
			a.store(key, a.render(op, r, body, key, d.record, identity))
		}
		at.Answer = check.AnswerHeld
		select {
		case a.heldOne <- key:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-a.released:
		}
		a.closeUnanswered(w, &at)
	default:
		at.Answer, e.retryAfter, e.bare = strconv.Itoa(d.answer.status), d.answer.retryAfter, d.answer.bare
		e.when, e.met, e.shouldRetry = d.answer.when, d.answer.met, d.answer.shouldRetry
		e.msg = http.StatusText(d.answer.status) + " (planned by the harness)"
		a.writeError(w, &at, d.answer.status, e)
	}
}

// render is a processed attempt's success answer.
func (a *api) render(op *targets.ClientOperation, r *http.Request, body []byte, key string, record int, identity string) stored {
	b, h, err := op.Response.Render(targets.ResponseVars{Key: key, Seq: strconv.Itoa(record), Ref: op.FirstIdentityValue(r, body)})
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": "the success response template failed: " + err.Error()})
		return stored{identity: identity, status: http.StatusInternalServerError, header: http.Header{"Content-Type": {"application/json"}}, body: b}
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return stored{identity: identity, status: op.Response.Status, header: h, body: b}
}

// write writes an answer and records it.
func (a *api) write(w http.ResponseWriter, at *history.Attempt, code int, h http.Header, body []byte) {
	for k, vs := range h {
		w.Header()[k] = append([]string(nil), vs...)
	}
	at.Answered = time.Now()
	w.WriteHeader(code)
	w.Write(body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	at.Status, at.RespHeader, at.RespBody = code, w.Header().Clone(), body
}

// closeUnanswered closes the attempt's connection without an answer.
func (a *api) closeUnanswered(w http.ResponseWriter, at *history.Attempt) {
	at.Outcome, at.Answered = history.Unknown, time.Now()
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(fmt.Sprintf("the scripted API cannot drop an answer on %T", w))
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		at.Err = "closing the connection: " + err.Error()
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // a reset, as a crashed server's
	}
	conn.Close()
}

// settleWait bounds how long settle waits for the requests in flight to be recorded.
const settleWait = 2 * time.Second

// settle lets every request in flight end and be recorded, once the client is done: the held
// ones are released, and settle waits (at most settleWait) until every request the API began is
// in the history. A client that sees its connection closed may return before the handler that
// closed it has recorded the attempt.
func (a *api) settle() {
	a.relOnce.Do(func() { close(a.released) })
	timer := time.NewTimer(settleWait)
	defer timer.Stop()
	for a.recorded.Load() < a.requests.Load() {
		select {
		case <-a.poke:
		case <-timer.C:
			return
		}
	}
}

// history returns this scenario's attempts, in the order they arrived (by Start: an attempt is
// recorded once it was answered, and a client that saw its connection closed or its answer may
// send its next attempt before the handler recorded the last one, so Seq can be out of that
// order on a loaded machine).
func (a *api) history() []history.Attempt {
	a.mu.Lock()
	seqs := append([]int64(nil), a.seqs...)
	a.mu.Unlock()
	mine := make(map[int64]bool, len(seqs))
	for _, s := range seqs {
		mine[s] = true
	}
	out := make([]history.Attempt, 0, len(seqs))
	for _, at := range a.hist.All() {
		if mine[at.Seq] {
			out = append(out, at)
		}
	}
	slices.SortStableFunc(out, func(x, y history.Attempt) int { return x.Start.Compare(y.Start) })
	return out
}

// connCount is the context key of a connection's request counter.
type connCount struct{}

// countRequests gives each connection a counter of the requests it carried (connRequests).
func countRequests(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connCount{}, new(atomic.Int64))
}

// connRequests counts r on its connection and returns how many requests the connection has
// carried, r included (0 when the server counts none).
func connRequests(r *http.Request) int64 {
	if n, ok := r.Context().Value(connCount{}).(*atomic.Int64); ok {
		return n.Add(1)
	}
	return 0
}
