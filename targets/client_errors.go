package targets

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// ErrorAnswer is how the API a client calls writes an error (clients[].errors and
// operations[].errors): a body template over ErrorVars, its content type and header templates.
// SDKs parse their provider's error shape and headers (Stripe-Should-Retry, x-should-retry)
// before they decide to retry; the scripted API writes every non-2xx in the shape declared.
type ErrorAnswer struct {
	// Body is the body template ("": the harness's own, {"error": "..."}).
	Body string
	// ContentType is the answer's Content-Type (default application/json).
	ContentType string
	// Headers are header templates; a Retry-After the scenario plans replaces a declared one.
	Headers map[string]string

	body    *tmpl
	headers []header
}

// ErrorVars are what an error answer's templates see.
type ErrorVars struct {
	// Status is the answer's status code (503); Text is its status text (Service Unavailable).
	Status, Text string
	// Ref is the operation's first identity value, Key the attempt's key ("" when none).
	Ref, Key string
	// Seq is the request's number in the scenario, 1 for the first request the API got (a
	// request id).
	Seq string
}

// errorFields are the placeholders of an error answer's templates.
var errorFields = []string{"Status", "Text", "Ref", "Key", "Seq"}

// DefaultErrorContentType is an error answer's Content-Type when none is declared.
const DefaultErrorContentType = "application/json"

// ErrorAnswers are the declared error answers of a client or an operation, by key: a status
// ("409"), a class ("4xx", "5xx") or "default".
type ErrorAnswers map[string]*ErrorAnswer

// ErrorFor returns the declared error answer for a status written for operation op (nil: a
// request for no operation): the most specific key of op's errors merged over the client's, key
// by key (the status, then its class, then default; at one key the operation's entry wins). nil
// when none is declared: the harness writes its own body.
func (c *Client) ErrorFor(op *ClientOperation, status int) *ErrorAnswer {
	for _, k := range []string{strconv.Itoa(status), fmt.Sprintf("%dxx", status/100), "default"} {
		if op != nil {
			if e := op.Errors[k]; e != nil {
				return e
			}
		}
		if e := c.Errors[k]; e != nil {
			return e
		}
	}
	return nil
}

// Render returns an error answer's body (nil: the harness's own) and headers, Content-Type set.
func (e *ErrorAnswer) Render(v ErrorVars) ([]byte, http.Header, error) {
	h := http.Header{}
	for _, hd := range e.headers {
		val, err := hd.tmpl.render(v)
		if err != nil {
			return nil, nil, fmt.Errorf("errors.headers.%s: %w", hd.Name, err)
		}
		h.Set(hd.Name, val)
	}
	h.Set("Content-Type", e.ContentType)
	if e.body == nil {
		return nil, h, nil
	}
	body, err := e.body.render(v)
	if err != nil {
		return nil, nil, fmt.Errorf("errors.body: %w", err)
	}
	return []byte(body), h, nil
}

// errorKey reports whether k is a key of an errors block: a status 400-599, 4xx, 5xx or default.
func errorKey(k string) bool {
	if k == "4xx" || k == "5xx" || k == "default" {
		return true
	}
	n, err := strconv.Atoi(k)
	return err == nil && n >= 400 && n <= 599
}

// clientErrors decodes an errors block (of a client or an operation).
func (d *decoder) clientErrors(o *object) ErrorAnswers {
	m, ok := d.mapping(o, "errors", `statuses ("409"), classes (4xx, 5xx) or default to error answers`)
	if !ok {
		return nil
	}
	out := ErrorAnswers{}
	entries, _ := d.mappingEntries(m, o.at("errors"), 0)
	for _, mv := range entries {
		key := strings.TrimSpace(mv.Key.GetToken().Value)
		path := o.at("errors") + "." + key
		if !errorKey(key) {
			d.ps.add(lineOf(mv.Key), path, `must be a status 400-599 ("409"), 4xx, 5xx or default, got %q`, key)
			continue
		}
		if _, dup := out[key]; dup {
			d.ps.add(lineOf(mv.Key), path, "duplicate key")
			continue
		}
		eo, ok := d.object(mv.Value, path, o.sub("errors")+".<status>")
		if !ok {
			continue
		}
		e := &ErrorAnswer{ContentType: DefaultErrorContentType}
		if s, ok := d.str(eo, "content_type"); ok {
			if e.ContentType = strings.TrimSpace(s); e.ContentType == "" || strings.ContainsAny(e.ContentType, "\r\n") {
				d.ps.add(eo.lineOf("content_type"), eo.at("content_type"), "must be a media type such as application/json, got %q", s)
			}
		}
		if tp, ok := d.tmplField(eo, "body", errorFields); ok {
			e.body, e.Body = tp, tp.src
			d.checkErrorBody(eo, e)
		}
		e.headers, _ = d.tmplHeaders(eo, errorFields)
		e.Headers = headerMap(e.headers)
		if !eo.has("body") && !eo.has("headers") && !eo.has("content_type") {
			d.ps.add(lineOf(mv.Key), path, "declare body, content_type or headers (what the API writes for this error)")
		}
		out[key] = e
	}
	return out
}

// checkErrorBody renders an error body whose content type is JSON with sample values and checks
// that it is JSON.
func (d *decoder) checkErrorBody(o *object, e *ErrorAnswer) {
	if !strings.Contains(strings.ToLower(e.ContentType), "json") {
		return
	}
	s, err := e.body.render(sampleError)
	if err != nil || json.Valid([]byte(s)) {
		return
	}
	var v any
	err = json.Unmarshal([]byte(s), &v)
	d.ps.add(o.lineOf("body"), o.at("body"), "not valid JSON when rendered with sample values (content_type %s): %v", e.ContentType, err)
}

// sampleError is what an error template is checked with.
var sampleError = ErrorVars{Status: "503", Text: "Service Unavailable", Ref: "rs-sample-1", Key: "k-sample", Seq: "1"}
