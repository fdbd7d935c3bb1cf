package framework

import (
	"net"
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
	rc.writePrefix()
	rc.writeLast()
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
	return o.s.History.Add(rc.a)
}
