package framework

import (
	"net"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// DoRaw sends one attempt written on the wire by the harness itself, as the last-byte bursts
// write theirs, for a request net/http refuses to send: a header value with a control character
// (a hostile key). It needs a plain http:// instance; it records the attempt like any other.
func (o *Op) DoRaw(send Send) history.Attempt {
	ctx, cancel := o.s.AttemptCtx(1)
	defer cancel()
	rc, err := o.s.prepareRaw(ctx, o, send)
	if err != nil {
		now := time.Now()
		return o.s.History.Add(history.Attempt{Op: o.Def.Name, Key: o.Key, Start: now, End: now,
			Outcome: history.Failed, Err: "build request: " + err.Error()})
	}
	rc.req.Header.Del(arrivalHeader)
	rc.wire = wireRequest(rc.req, rc.a.ReqBody)
	rc.a.ReqHeader.Del(arrivalHeader)
	rc.a.Note = "sent raw: net/http refuses this header value"
	var d net.Dialer
	rc.dial(ctx, &d, time.Now().Add(o.s.Settings.AttemptTimeout))
	if !rc.broken { // in one write: a last byte arriving after a refusal would reset the answer
		if n, err := rc.conn.Write(rc.wire); err != nil {
			outcome := history.Unknown
			if n == 0 {
				outcome = history.Failed
			}
			rc.fail(outcome, "writing the request: "+err.Error())
		}
	}
	if rc.conn != nil {
		defer rc.conn.Close()
	}
	written := make(chan struct{})
	close(written)
	start := rc.a.Start
	rc.readResponse(written, &start, httpclient.DefaultMaxBody)
	if rc.a.End.IsZero() {
		rc.a.End = time.Now()
	}
	if a := &rc.a; a.Outcome == history.Unknown && a.Status >= 400 && strings.HasPrefix(a.Err, "reading the response body") {
		// A server that refuses a malformed header often closes the connection with the rest of
		// the request unread: the reset can cut the body of its answer, never its status.
		a.Outcome, a.Note, a.Err = history.OK, a.Note+"; the answer's body was cut: "+strings.TrimPrefix(a.Err, "reading the response body: "), ""
	}
	return o.s.History.Add(rc.a)
}
