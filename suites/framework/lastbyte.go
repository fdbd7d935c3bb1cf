package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// Race modes: how a same-key burst releases its requests.
const (
	// RaceModeLastByte writes each request on its own raw HTTP/1.1 connection except its
	// final byte, then releases every final byte at once (one tight loop of writes per core):
	// the server cannot start on any request before its last byte arrives, so the requests
	// complete together. It applies to http:// targets only.
	RaceModeLastByte = "lastbyte"
	// RaceModeBarrier parks one goroutine per request, each on a warm keep-alive connection,
	// and releases them together by closing a channel. It works over any transport.
	RaceModeBarrier = "barrier"
)

// lastByteSettle is how long the held-back requests are left to reach the server before
// their final bytes go: the server must have read everything else by then. The server's
// progress cannot be observed from here, so this one wait is a sleep.
const lastByteSettle = 3 * time.Millisecond

// raceMode returns the mode a burst uses: the one asked for, last-byte only where every
// instance is plain http, and last-byte by default there.
func (e *Env) raceMode() string {
	plain := true
	for _, in := range e.Target.Instances {
		plain = plain && in.URL.Scheme == "http"
	}
	if e.Settings.RaceMode == RaceModeBarrier || !plain {
		return RaceModeBarrier
	}
	return RaceModeLastByte
}

// rawConn is one request of a last-byte burst on its own connection.
type rawConn struct {
	conn   net.Conn
	req    *http.Request
	wire   []byte // the request as written, the final byte last
	a      history.Attempt
	broken bool // the attempt is decided (dial or write failed)
}

// lastByteBurst sends k attempts of one operation with last-byte synchronisation and
// records each in the history. Connections are dialled and every request but its final
// byte written before the release.
func (s *S) lastByteBurst(op *Op, k int) []history.Attempt {
	e := s.Env
	ctx, cancel := s.AttemptCtx(3)
	defer cancel()
	rcs := make([]*rawConn, k)
	for i := range rcs {
		rc, err := s.prepareRaw(ctx, op, Send{Instance: i})
		if err != nil {
			return []history.Attempt{{Op: op.Def.Name, Key: op.Key, Outcome: history.Failed, Err: "build request: " + err.Error()}}
		}
		rcs[i] = rc
	}
	defer func() {
		for _, rc := range rcs {
			if rc.conn != nil {
				rc.conn.Close()
			}
		}
	}()
	// Closing the connections ends the burst early when the environment is closed.
	defer context.AfterFunc(ctx, func() {
		for _, rc := range rcs {
			if rc.conn != nil {
				rc.conn.Close()
			}
		}
	})()
	deadline := time.Now().Add(e.Settings.AttemptTimeout)
	var d net.Dialer
	for _, rc := range rcs {
		rc.dial(ctx, &d, deadline)
	}
	for _, rc := range rcs {
		rc.writePrefix()
	}
	// The readers wait for their answers before the release, so that nothing but the
	// final writes runs on the harness's side once they go; they touch their attempt only
	// once every write is done.
	var released time.Time
	written := make(chan struct{})
	done := make(chan struct{}, k)
	for _, rc := range rcs {
		go func() {
			rc.readResponse(written, &released, httpclient.DefaultMaxBody)
			done <- struct{}{}
		}()
	}
	time.Sleep(lastByteSettle)
	released = time.Now()
	release(rcs)
	close(written)
	for range rcs {
		<-done
	}
	out := make([]history.Attempt, k)
	for i, rc := range rcs {
		out[i] = e.History.Add(rc.a)
	}
	return out
}

// prepareRaw renders one attempt of a burst (or one raw attempt, rawsend.go) and its wire form.
func (s *S) prepareRaw(ctx context.Context, op *Op, send Send) (*rawConn, error) {
	req, meta, err := op.Build(ctx, send)
	if err != nil {
		return nil, err
	}
	req.Header.Set(arrivalHeader, "1")
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", httpclient.UserAgent)
	}
	var body []byte
	if req.Body != nil {
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
	}
	rc := &rawConn{req: req, wire: wireRequest(req, body)}
	rc.a = history.Attempt{
		Op: meta.Op, Key: meta.Key, Tenant: meta.Tenant, Instance: meta.Instance,
		Method: req.Method, URL: req.URL.String(), ReqHeader: req.Header.Clone(), ReqBody: body,
		Note: "sent raw with last-byte synchronisation",
	}
	return rc, nil
}

// wireRequest is the HTTP/1.1 form of a request with a Content-Length: the request line,
// Host, the headers sorted by name, and the body.
func wireRequest(req *http.Request, body []byte) []byte {
	var b bytes.Buffer
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), host)
	_ = req.Header.WriteSubset(&b, map[string]bool{"Host": true, "Content-Length": true, "Transfer-Encoding": true})
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}

// dial opens the attempt's connection.
func (rc *rawConn) dial(ctx context.Context, d *net.Dialer, deadline time.Time) {
	rc.a.Start = time.Now()
	addr := rc.req.URL.Host
	if rc.req.URL.Port() == "" {
		addr = net.JoinHostPort(rc.req.URL.Hostname(), "80")
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		rc.fail(history.Failed, "dial: "+err.Error())
		return
	}
	rc.conn = conn
	_ = conn.SetDeadline(deadline)
}

// writePrefix writes all but the final byte.
func (rc *rawConn) writePrefix() {
	if rc.broken {
		return
	}
	n, err := rc.conn.Write(rc.wire[:len(rc.wire)-1])
	if err != nil {
		outcome := history.Unknown
		if n == 0 {
			outcome = history.Failed
		}
		rc.fail(outcome, "writing the request: "+err.Error())
	}
}

// writeLast releases the final byte.
func (rc *rawConn) writeLast() {
	if rc.broken {
		return
	}
	if _, err := rc.conn.Write(rc.wire[len(rc.wire)-1:]); err != nil {
		rc.fail(history.Unknown, "writing the final byte: "+err.Error())
	}
}

// readResponse reads the answer (its body up to maxBody) into the attempt. It starts
// waiting before the release and records nothing until written is closed.
func (rc *rawConn) readResponse(written <-chan struct{}, released *time.Time, maxBody int64) {
	br := bufio.NewReader(rc.conn)
	var perr error
	if !rc.broken { // set before the readers start: by a failed dial or first write
		_, perr = br.Peek(1) // the first byte of the answer, or an error
	}
	<-written
	if rc.broken {
		return
	}
	rc.a.Start = *released
	if perr != nil {
		rc.fail(history.Unknown, "reading the response: "+perr.Error())
		return
	}
	resp, err := http.ReadResponse(br, rc.req)
	if err != nil {
		rc.fail(history.Unknown, "reading the response: "+err.Error())
		return
	}
	httpclient.RecordResponse(&rc.a, resp, maxBody)
}

func (rc *rawConn) fail(outcome history.Outcome, msg string) {
	rc.broken = true
	rc.a.End, rc.a.Outcome, rc.a.Err = time.Now(), outcome, msg
}

// release writes the final bytes: one goroutine per P, each looping over its share of the
// connections, all let go together by a spinning barrier. Every P of this process is busy
// writing until the last byte is out, so that no other goroutine (the harness's own, or those
// of a target served in-process) runs between the first final byte and the last, and the
// writes, which cost a system call each, take half the time on two cores.
//
// All writers but the first then spin for releaseLinger before they end. Without that, the
// Ps of all writers look for work at the same moment: one of them takes every request the
// network poller has just made ready, and the others can find nothing and put their threads
// to sleep a microsecond before those requests reach a run queue; waking a sleeping thread
// (on a virtual machine, an idle virtual CPU) then takes hundreds of microseconds, and a
// target served in-process handles the whole burst one request after the other on one P.
// Lingering keeps those threads awake until the requests can be taken from the first P's
// queue. It measurably helps (benchmark 2: SQLite rounds with a duplicate from about 90% to
// about 97%) and costs nothing when the target runs elsewhere.
func release(rcs []*rawConn) {
	n := runtime.GOMAXPROCS(0)
	var ready atomic.Int32
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			ready.Add(1)
			// Wait (briefly: the OS may hold a P back) until every writer runs.
			for deadline := time.Now().Add(time.Millisecond); ready.Load() < int32(n) && time.Now().Before(deadline); {
			}
			for i := g; i < len(rcs); i += n {
				rcs[i].writeLast()
			}
			for deadline := time.Now().Add(releaseLinger); g > 0 && time.Now().Before(deadline); {
			}
		})
	}
	wg.Wait()
}

// releaseLinger is how long all writers of a release but the first keep their P busy after
// their last write; see release.
const releaseLinger = 30 * time.Microsecond

// arrivalHeader asks a target that supports it (the reference API) to answer with the time at
// which it had read the request's body, in Unix nanoseconds.
const arrivalHeader = "X-Retrysafe-Arrival"

// ErrNoArrival is returned by ArrivalSpread when fewer than two answers carry an arrival time.
var ErrNoArrival = errors.New("fewer than two answers carry " + arrivalHeader)

// ArrivalSpread is the server-side arrival spread of a burst: the latest minus the earliest
// arrival time reported by the answers.
func ArrivalSpread(atts []history.Attempt) (time.Duration, error) {
	var lo, hi int64
	n := 0
	for _, a := range atts {
		v, err := strconv.ParseInt(a.RespHeader.Get(arrivalHeader), 10, 64)
		if a.Outcome != history.OK || err != nil {
			continue
		}
		if n == 0 || v < lo {
			lo = v
		}
		if n == 0 || v > hi {
			hi = v
		}
		n++
	}
	if n < 2 {
		return 0, ErrNoArrival
	}
	return time.Duration(hi - lo), nil
}
