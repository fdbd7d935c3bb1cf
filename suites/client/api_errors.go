package client

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The scripted API's error answers: in the shape the client declares (errors:), or bare.

// bareBody is an error answer's body that is not the error shape the client declares: what a
// proxy, a load balancer or a framework's default handler writes.
type bareBody struct {
	contentType, body string
}

// The bare bodies the scenarios answer with.
var (
	// plainText is a load balancer's or a proxy's error page.
	plainText = &bareBody{contentType: "text/plain; charset=utf-8", body: "Service Unavailable\n"}
	// emptyJSON is an empty JSON object: JSON, but no error member.
	emptyJSON = &bareBody{contentType: "application/json", body: "{}"}
)

// bareStatus answers with a status code and a body that is not the declared error shape.
func bareStatus(code int, b *bareBody) answer { return answer{status: code, bare: b} }

// errorAnswer is what a non-2xx answer is about.
type errorAnswer struct {
	n          int64                    // the request's number in the scenario
	op         *targets.ClientOperation // nil: a request for no operation
	ref, key   string                   // the operation's first identity value, the attempt's key
	msg        string                   // the harness's own message
	retryAfter time.Duration            // planned (0: none)
	bare       *bareBody                // planned: this body, not the declared shape (nil: the shape)
	// Planned: a condition of the policy's retries met or not (nil: the body as it is), the
	// should-retry header's value ("": none; nil: as the shape declares it).
	when        *targets.RetryWhen
	met         bool
	shouldRetry *string
}

// writeError writes a non-2xx answer in the shape the client declares for its status (the
// harness's own JSON, {"error": msg}, where it declares none or no body), or the bare body the
// scenario planned. A planned Retry-After replaces a declared one; the Retry-After written,
// either, is recorded as the attempt's.
func (a *api) writeError(w http.ResponseWriter, at *history.Attempt, code int, e errorAnswer) {
	body, _ := json.Marshal(map[string]string{"error": e.msg})
	h := http.Header{"Content-Type": {targets.DefaultErrorContentType}}
	if e.bare != nil {
		body, h = []byte(e.bare.body), http.Header{"Content-Type": {e.bare.contentType}}
	} else if shape := a.client.ErrorFor(e.op, code); shape != nil {
		b, sh, err := shape.Render(targets.ErrorVars{Status: strconv.Itoa(code), Text: http.StatusText(code), Ref: e.ref, Key: e.key,
			Seq: strconv.FormatInt(e.n, 10)})
		switch {
		case err != nil:
			at.Err = "the declared error answer failed: " + err.Error() + " (the harness's own was written)"
		case b != nil:
			body, h = b, sh
		default:
			h = sh
		}
	}
	body, h = a.decides(body, h, e)
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((e.retryAfter+time.Second-1)/time.Second)))
	}
	at.RetryAfter = retryAfterOf(h.Get("Retry-After"), time.Now())
	a.write(w, at, code, h, body)
}

// decides writes into an error answer what the scenario planned its content to decide: the
// member a condition of retries reads, set (met) or removed, and the should-retry header's value,
// set or removed.
func (a *api) decides(body []byte, h http.Header, e errorAnswer) ([]byte, http.Header) {
	if e.when != nil {
		valid := json.Valid(body)
		body = e.when.Apply(body, e.met)
		if !valid && json.Valid(body) {
			h.Set("Content-Type", "application/json")
		}
	}
	if sr := a.policy.ShouldRetryHeader; sr != nil && e.shouldRetry != nil {
		if *e.shouldRetry == "" {
			h.Del(sr.Name)
		} else {
			h.Set(sr.Name, *e.shouldRetry)
		}
	}
	return body, h
}

// retryAfterOf is the wait a Retry-After value asks for: delta-seconds or an HTTP-date (0: none,
// unreadable, or a date past).
func retryAfterOf(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}
