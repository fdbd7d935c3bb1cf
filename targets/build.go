package targets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/dunglas/httpsfv"
)

// KeyMode says how the key of one attempt is sent.
type KeyMode struct {
	// Omit sends no key at all.
	Omit bool
	// Form is the form to send; "" = the operation's default form (the first accepted one).
	Form KeyForm
	// Raw, when set, is sent exactly as given (no quoting), e.g. "" for the empty-key check.
	Raw *string
}

// BuildInput is everything one attempt of an operation needs.
type BuildInput struct {
	// Instance is the instance to send to (required).
	Instance *Instance
	// Tenant supplies the authentication headers; nil = none.
	Tenant *Tenant
	// Vars fill the templates; Vars.Tenant defaults to Tenant.Name.
	Vars Vars
	// Variant sends variant_body instead of body.
	Variant bool
	// Key says how Vars.Key is sent.
	Key KeyMode
	// Body, when non-nil, is sent instead of the rendered body, as is (the key is not added to it):
	// e.g. the output of Reformat applied to an earlier Build's body.
	Body []byte
	// Context is the request's context; nil = context.Background().
	Context context.Context
	// Slow, with SlowMs > 0, makes the attempt slow through the target's slow hook.
	Slow   *SlowHook
	SlowMs int64
}

// Build renders one attempt of the operation: the request and the exact body bytes it carries. The
// key is placed per the operation's key spec (header, query parameter or body field). The returned
// request has GetBody == nil and a non-nil Body (also when empty), so that net/http's transport never
// re-sends it behind the caller's back.
func (op *Operation) Build(in BuildInput) (*http.Request, []byte, error) {
	if in.Instance == nil || in.Instance.URL == nil {
		return nil, nil, errors.New("targets: Build needs an instance")
	}
	if in.Tenant != nil && in.Vars.Tenant == "" {
		in.Vars.Tenant = in.Tenant.Name
	}
	bodyT := op.req.body
	if in.Variant {
		if op.variant == nil {
			return nil, nil, fmt.Errorf("operation %s has no variant_body", op.Name)
		}
		bodyT = op.variant
	}
	var keyVal string
	sendKey := !in.Key.Omit
	if sendKey {
		var err error
		if keyVal, err = op.keyValue(in.Vars.Key, in.Key); err != nil {
			return nil, nil, err
		}
	}
	body := in.Body
	if body == nil {
		s, err := bodyT.render(in.Vars)
		if err != nil {
			return nil, nil, fmt.Errorf("operation %s: body: %w", op.Name, err)
		}
		body = []byte(s)
		if sendKey && op.Key.In == KeyInBody {
			if body, err = addBodyField(body, op.req.format, op.Key.Name, keyVal); err != nil {
				return nil, nil, fmt.Errorf("operation %s: %w", op.Name, err)
			}
		}
	}
	pq, err := op.req.pathQuery(in.Vars)
	if err != nil {
		return nil, nil, fmt.Errorf("operation %s: %w", op.Name, err)
	}
	if sendKey && op.Key.In == KeyInQuery {
		pq = appendQuery(pq, url.QueryEscape(op.Key.Name)+"="+url.QueryEscape(keyVal))
	}
	req, err := op.req.newRequest(in.Context, in.Instance, in.Tenant, in.Vars, pq, body)
	if err != nil {
		return nil, nil, fmt.Errorf("operation %s: %w", op.Name, err)
	}
	if sendKey && op.Key.In == KeyInHeader {
		req.Header[http.CanonicalHeaderKey(op.Key.Name)] = []string{keyVal}
	}
	if in.Slow != nil && in.SlowMs > 0 {
		if err := in.Slow.apply(req, in.Vars, in.SlowMs); err != nil {
			return nil, nil, err
		}
	}
	if len(body) == 0 {
		// Not nil or http.NoBody: net/http's transport re-sends a request without a body on a
		// broken keep-alive connection when it carries an Idempotency-Key header (or is a GET).
		req.Body, req.ContentLength = emptyBody{}, 0
	}
	return req, body, nil
}

// keyValue returns the key as written on the wire.
func (op *Operation) keyValue(key string, m KeyMode) (string, error) {
	if m.Raw != nil {
		return *m.Raw, nil
	}
	form := m.Form
	if form == "" {
		form = op.Key.Form
	}
	switch form {
	case KeyBare:
		return key, nil
	case KeyQuoted:
		s, err := httpsfv.Marshal(httpsfv.NewItem(key))
		if err != nil {
			return "", fmt.Errorf("key %q cannot be written as an RFC 8941 string (printable ASCII only): %w", key, err)
		}
		return s, nil
	}
	return "", fmt.Errorf("unknown key form %q (known: quoted, bare)", form)
}

// pathQuery renders the path and appends the rendered query.
func (r *request) pathQuery(v any) (string, error) {
	p, err := r.path.render(v)
	if err != nil {
		return "", fmt.Errorf("path: %w", err)
	}
	q, err := r.query.render(v)
	if err != nil {
		return "", fmt.Errorf("query: %w", err)
	}
	return appendQuery(p, strings.TrimPrefix(q, "?")), nil
}

// render renders the whole request (path, query, headers and body) for an instance and a
// tenant; pq is the rendered path and query.
func (r *request) render(ctx context.Context, inst *Instance, tn *Tenant, v any) (req *http.Request, pq string, err error) {
	if pq, err = r.pathQuery(v); err != nil {
		return nil, "", err
	}
	body, err := r.body.render(v)
	if err != nil {
		return nil, "", fmt.Errorf("body: %w", err)
	}
	req, err = r.newRequest(ctx, inst, tn, v, pq, []byte(body))
	return req, pq, err
}

func appendQuery(pq, q string) string {
	switch {
	case q == "":
		return pq
	case !strings.Contains(pq, "?"):
		return pq + "?" + q
	case strings.HasSuffix(pq, "?") || strings.HasSuffix(pq, "&"):
		return pq + q
	}
	return pq + "&" + q
}

// newRequest assembles a request: declared headers, then the tenant's (which win), then
// Content-Type when the body is not empty and no Content-Type was declared; a Host header
// becomes the request's Host. GetBody is nil.
func (r *request) newRequest(ctx context.Context, inst *Instance, tn *Tenant, v any, pq string, body []byte) (*http.Request, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	u, err := inst.resolveString(pq)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for _, h := range r.headers {
		val, err := h.tmpl.render(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", h.Name, err)
		}
		req.Header.Set(h.Name, val)
	}
	if tn != nil {
		for _, name := range tn.order {
			req.Header.Set(name, tn.Headers[name])
		}
	}
	if host := req.Header.Get("Host"); host != "" {
		// net/http sends req.Host and ignores a Host header: a declared one (an API behind a
		// virtual host reached by address) goes there.
		req.Host = host
		req.Header.Del("Host")
	}
	if len(body) > 0 && req.Header.Get("Content-Type") == "" {
		ct := "application/json"
		if r.format == BodyForm {
			ct = "application/x-www-form-urlencoded"
		}
		req.Header.Set("Content-Type", ct)
	}
	req.GetBody = nil
	return req, nil
}

// emptyBody is an empty request body that net/http does not treat as "no body".
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// bodyKeyProblem says why the harness cannot add the key field name to body ("" when it can).
func bodyKeyProblem(body []byte, format BodyFormat, name string) string {
	if format == BodyForm {
		vals, err := url.ParseQuery(strings.TrimSpace(string(body)))
		if err == nil && vals.Has(name) {
			return fmt.Sprintf("already has the field %s; remove it, the harness adds the key there", name)
		}
		return ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return "must be a JSON object so that the harness can add the key field " + name
	}
	if _, has := obj[name]; has {
		return fmt.Sprintf("already has the field %q; remove it, the harness adds the key there", name)
	}
	return ""
}

// addBodyField adds name=value to a form body, or "name": value as the last member of a JSON
// object, leaving every other byte as rendered.
func addBodyField(body []byte, format BodyFormat, name, value string) ([]byte, error) {
	if msg := bodyKeyProblem(body, format, name); msg != "" {
		return nil, errors.New("body " + msg)
	}
	if format == BodyForm {
		trimmed := bytes.TrimRight(body, " \r\n\t")
		pair := url.QueryEscape(name) + "=" + url.QueryEscape(value)
		if len(bytes.TrimSpace(trimmed)) == 0 {
			return []byte(pair), nil
		}
		return append(append(bytes.Clone(trimmed), '&'), pair...), nil
	}
	end := bytes.LastIndexByte(body, '}')
	member, _ := json.Marshal(map[string]string{name: value})
	member = member[1 : len(member)-1] // "name":"value"
	head := bytes.TrimRight(body[:end], " \r\n\t")
	out := bytes.Clone(head)
	if !bytes.HasSuffix(head, []byte("{")) {
		out = append(out, ',')
	}
	out = append(out, member...)
	return append(out, body[end:]...), nil
}
