package targets

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/theory/jsonpath"
)

// BodyFormat is how a request body is encoded.
type BodyFormat string

const (
	// BodyJSON is application/json.
	BodyJSON BodyFormat = "json"
	// BodyForm is application/x-www-form-urlencoded.
	BodyForm BodyFormat = "form"
)

// KeyLocation is where an operation carries its idempotency key.
type KeyLocation string

const (
	// KeyInHeader sends the key in a request header (Idempotency-Key by default).
	KeyInHeader KeyLocation = "header"
	// KeyInQuery sends the key as a query parameter.
	KeyInQuery KeyLocation = "query"
	// KeyInBody sends the key as a top-level body field (AWS ClientToken, Shopify idempotencyKey).
	KeyInBody KeyLocation = "body"
)

// KeySpec says where and how an operation's key is sent.
type KeySpec struct {
	In   KeyLocation
	Name string
	// Form is the form sent by default.
	Form KeyForm
	// Format is the shape of the keys the harness makes.
	Format KeyFormat

	formDeclared bool // the file writes key.form (keyforms.go)
}

// Operation is one idempotent operation of the target. Path, Headers, Body and VariantBody are
// template sources; Build renders them.
type Operation struct {
	// Name identifies the operation in reports and labels.
	Name string
	// Method is the HTTP method (default POST).
	Method string
	// Path is the path template, possibly with a ?query.
	Path string
	// Headers are the declared request headers (template values).
	Headers map[string]string
	// Body and VariantBody are body templates; VariantBody is "" when not declared.
	Body, VariantBody string
	// BodyFormat is json or form.
	BodyFormat BodyFormat
	// Key says where and how the idempotency key goes.
	Key KeySpec
	// Observer counts the business records of one {{.Ref}}; nil = none declared.
	Observer *Observer
	// FingerprintIgnore are the JSONPaths of body fields (or "?name" query parameters) the API
	// leaves out of its fingerprint on purpose: the mismatch check does not change them.
	FingerprintIgnore []string
	// Publishes are the events the operation publishes (its publishes block); empty = none
	// declared.
	Publishes []*Publish

	// Async says how an operation that finishes after its 202 answer is followed (its async
	// block, async.go); nil = the operation finishes inside the request.
	Async *Async
	// Resource is the resource an answer names, read afresh for profile.replay_returns: current
	// (its resource block); nil = none declared.
	Resource *Resource

	req        request
	ignoreForm []string // in a form body, the names of the fields FingerprintIgnore names
	variant    *tmpl
	forms      []KeyForm
}

// HasVariant reports whether the operation declares a variant_body for the mismatch check.
func (op *Operation) HasVariant() bool { return op.variant != nil }

// KeyForms returns the key forms the target must accept on this operation, the default form first:
// the profile's key_forms for a header key, the declared form for a query or body key.
func (op *Operation) KeyForms() []KeyForm { return slices.Clone(op.forms) }

// Observer counts business records: exactly one of HTTP and SQL is set.
type Observer struct {
	HTTP *HTTPObserver
	SQL  *SQLQuery
	// Bulk counts the records of every ref of a run at once (observer.bulk, operations only): an
	// SQL query over {{.Prefix}}, the run's ref prefix, returning rows (ref, count). retrysafe
	// merge uses it instead of one observer request per operation; nil = none.
	Bulk *SQLQuery

	perTenant *bool // observer.per_tenant; nil = true
}

// HTTPObserver asks the API itself: GET Path?Query with the tenant's headers, then JSONPath.
type HTTPObserver struct {
	Method   string
	Path     string
	Query    string
	Headers  map[string]string
	JSONPath string

	req  request
	path *jsonpath.Path
}

// request is the rendered-on-demand part shared by operations, HTTP observers and cleanup.
type request struct {
	method  string
	path    *tmpl
	query   *tmpl
	headers []header
	body    *tmpl
	format  BodyFormat
}

// operations decodes the operation list.
func (d *decoder) operations(top *object, t *Target) []*Operation {
	nodes, ok := d.list(top, "operations")
	if !ok {
		if !top.has("consumers") && !top.has("clients") {
			d.ps.add(top.lineOf("operations"), "operations", "missing required field (the idempotent operations to test, or consumers, or clients)")
		}
		return nil
	}
	if len(nodes) == 0 {
		d.ps.add(top.lineOf("operations"), "operations", "must list at least one operation")
	}
	var out []*Operation
	seen := map[string]int{}
	for i, n := range nodes {
		o, ok := d.object(n, fmt.Sprintf("operations[%d]", i), "operations[]")
		if !ok {
			continue
		}
		op := &Operation{Name: d.uniqueName(o, "operation", seen)}
		d.request(o, &op.req, "POST")
		op.Method, op.Path, op.BodyFormat = op.req.method, srcOf(op.req.path), op.req.format
		op.Headers, op.Body = headerMap(op.req.headers), srcOf(op.req.body)
		op.FingerprintIgnore, op.ignoreForm = d.fingerprintIgnore(o, op.req.format)
		if o.has("variant_body") {
			if tp, ok := d.tmplField(o, "variant_body", requestFields); ok {
				op.variant, op.VariantBody = tp, tp.src
				d.checkBody(o, "variant_body", tp, op.req.format)
				if same, _ := sameContent(op.req.body, tp, op.req.format); same {
					d.ps.add(o.lineOf("variant_body"), o.at("variant_body"), "renders the same content as body; the mismatch check needs a different payload")
				}
			}
		}
		op.Key = d.key(o, op, t.Profile)
		if o.has("observer") {
			op.Observer = d.observer(o)
		}
		op.Publishes = d.publishes(o, op)
		if o.has("async") {
			op.Async = d.async(o)
		}
		if o.has("resource") {
			op.Resource = d.resource(o)
		}
		out = append(out, op)
	}
	return out
}

func srcOf(t *tmpl) string {
	if t == nil {
		return ""
	}
	return t.src
}

func headerMap(hs []header) map[string]string {
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// tmplHeaders decodes o's headers, whose values are templates over fields; declared counts them
// all, those with a bad template (reported, and left out of hs) included.
func (d *decoder) tmplHeaders(o *object, fields []string) (hs []header, declared int) {
	return d.tmplHeadersAt(o, "headers", fields)
}

// tmplHeadersAt is tmplHeaders of o's mapping name (message_headers, env).
func (d *decoder) tmplHeadersAt(o *object, name string, fields []string) (hs []header, declared int) {
	all := d.headers(o, name)
	for _, h := range all {
		if tp, ok := d.compile(h.Value, srcPos{line: h.line}, o.at(name)+"."+h.Name, fields); ok {
			h.tmpl = tp
			hs = append(hs, h)
		}
	}
	return hs, len(all)
}

// uniqueName decodes the required name of a list element (what: operation, consumer): letters,
// digits, '-', '_' and '.', and unique (seen maps the names decoded so far to their lines).
func (d *decoder) uniqueName(o *object, what string, seen map[string]int) string {
	name, ok := d.required(o, "name", "")
	if !ok {
		return ""
	}
	name = strings.TrimSpace(name)
	if !nameRe.MatchString(name) {
		d.ps.add(o.lineOf("name"), o.at("name"), "%q: use letters, digits, '-', '_' and '.'", name)
	} else if first, dup := seen[name]; dup {
		d.ps.add(o.lineOf("name"), o.at("name"), "duplicate %s %q (first on line %d)", what, name, first)
	}
	seen[name] = o.lineOf("name")
	return name
}

// request decodes method, path (required), query, headers, body and body_format where the object
// has them.
func (d *decoder) request(o *object, r *request, defMethod string) {
	d.requestWith(o, r, defMethod, requestFields)
}

// requestWith is request with the placeholders its templates may use.
func (d *decoder) requestWith(o *object, r *request, defMethod string, fields []string) {
	r.method, r.format = defMethod, BodyJSON
	if s, ok := d.str(o, "method"); ok {
		r.method = strings.ToUpper(strings.TrimSpace(s))
		if !validHeaderName(r.method) {
			d.ps.add(o.lineOf("method"), o.at("method"), "%q is not an HTTP method", s)
		}
	}
	if _, ok := d.required(o, "path", " (such as /v1/orders)"); ok {
		if tp, ok := d.tmplField(o, "path", fields); ok {
			r.path = tp
			if p, _ := tp.render(sampleFor(fields)); !strings.HasPrefix(p, "/") {
				d.ps.add(o.lineOf("path"), o.at("path"), "must start with /, got %q", tp.src)
			} else if _, err := url.Parse(p); err != nil {
				d.ps.add(o.lineOf("path"), o.at("path"), "bad path: %v", err)
			}
		}
	}
	r.query, _ = d.tmplField(o, "query", fields)
	r.headers, _ = d.tmplHeaders(o, fields)
	if s, ok := d.str(o, "body_format"); ok {
		switch BodyFormat(strings.TrimSpace(s)) {
		case BodyJSON, BodyForm:
			r.format = BodyFormat(strings.TrimSpace(s))
		default:
			d.ps.add(o.lineOf("body_format"), o.at("body_format"), "must be json or form, got %q", s)
		}
	}
	if tp, ok := d.tmplField(o, "body", fields); ok {
		r.body = tp
		d.checkBody(o, "body", tp, r.format)
	}
}

// checkBody renders a body with sample values and checks it is valid for its format.
func (d *decoder) checkBody(o *object, name string, tp *tmpl, format BodyFormat) {
	s, err := tp.render(sampleVars)
	if err != nil || strings.TrimSpace(s) == "" {
		return
	}
	if format == BodyForm {
		if _, err := url.ParseQuery(strings.TrimSpace(s)); err != nil {
			d.ps.add(o.lineOf(name), o.at(name), "not a valid form body (name=value&...): %v", err)
		}
		return
	}
	if !json.Valid([]byte(s)) {
		var v any
		err := json.Unmarshal([]byte(s), &v)
		d.ps.add(o.lineOf(name), o.at(name), "not valid JSON when rendered with sample values: %v", err)
	}
}

// sameContent reports whether two bodies render (with sample values) to the same content.
func sameContent(a, b *tmpl, format BodyFormat) (bool, error) {
	as, err := a.render(sampleVars)
	if err != nil {
		return false, err
	}
	bs, err := b.render(sampleVars)
	if err != nil {
		return false, err
	}
	ca, err1 := canonical([]byte(as), format)
	cb, err2 := canonical([]byte(bs), format)
	if err1 != nil || err2 != nil {
		return as == bs, nil
	}
	return ca == cb, nil
}

// key decodes an operation's key spec.
func (d *decoder) key(o *object, op *Operation, p Profile) KeySpec {
	k := KeySpec{In: KeyInHeader}
	ko, ok := d.child(o, "key")
	if !ok {
		ko = &object{path: o.at("key"), fields: map[string]field{}}
	}
	k.Format = d.keyFormat(ko)
	if n := k.Format.sampleKeyLength(); ko.has("format") && p.MaxKeyLength > 0 && n > p.MaxKeyLength {
		d.ps.add(ko.lineOf("format"), ko.at("format"), "gives keys of %d characters, longer than profile.max_key_length %d: no key could be accepted",
			n, p.MaxKeyLength)
	}
	if s, ok := d.str(ko, "in"); ok {
		switch KeyLocation(strings.TrimSpace(s)) {
		case KeyInHeader, KeyInQuery, KeyInBody:
			k.In = KeyLocation(strings.TrimSpace(s))
		default:
			d.ps.add(ko.lineOf("in"), ko.at("in"), "must be header, query or body, got %q", s)
		}
	}
	if k.In == KeyInHeader {
		k.Name = "Idempotency-Key"
		if s, ok := d.str(ko, "name"); ok {
			if k.Name = strings.TrimSpace(s); !validHeaderName(k.Name) {
				d.ps.add(ko.lineOf("name"), ko.at("name"), "%q is not a valid HTTP header name", s)
			}
		}
	} else if s, ok := d.required(ko, "name", fmt.Sprintf(" (the %s field that carries the key)", k.In)); ok {
		k.Name = strings.TrimSpace(s)
	}
	k.Form = KeyBare
	if k.In == KeyInHeader {
		k.Form = p.KeyForms[0]
	}
	if s, ok := d.str(ko, "form"); ok {
		k.formDeclared = true
		f := KeyForm(strings.TrimSpace(s))
		switch {
		case f != KeyQuoted && f != KeyBare:
			d.ps.add(ko.lineOf("form"), ko.at("form"), "must be quoted or bare, got %q", s)
		case k.In == KeyInHeader && !slices.Contains(p.KeyForms, f):
			d.ps.add(ko.lineOf("form"), ko.at("form"), "%s is not among profile.key_forms %v", f, p.KeyForms)
		default:
			k.Form = f
		}
	}
	op.forms = []KeyForm{k.Form}
	if k.In == KeyInHeader {
		for _, f := range p.KeyForms {
			if f != k.Form {
				op.forms = append(op.forms, f)
			}
		}
	}
	if k.In == KeyInBody && k.Name != "" {
		for _, b := range []struct {
			name string
			t    *tmpl
		}{{"body", op.req.body}, {"variant_body", op.variant}} {
			if b.t == nil {
				if b.name == "body" {
					d.ps.add(ko.lineOf("in"), o.at("body"), "required when key.in is body (the harness adds the key field to it)")
				}
				continue
			}
			s, _ := b.t.render(sampleVars)
			if msg := bodyKeyProblem([]byte(s), op.req.format, k.Name); msg != "" {
				d.ps.add(o.lineOf(b.name), o.at(b.name), "%s", msg)
			}
		}
	}
	return k
}

// observer decodes an operation's observer: http or sql.
func (d *decoder) observer(o *object) *Observer { return d.observerAt(o, "observer", requestFields) }

// bulkFields are the placeholders of a bulk observer's query: the run's ref prefix.
var bulkFields = []string{"Prefix"}

// BulkVars are what a bulk observer's query sees: {{.Prefix}}, which every ref of the run starts with.
type BulkVars struct{ Prefix string }

// observerAt decodes the observer in field name of o, whose templates may use fields.
func (d *decoder) observerAt(o *object, name string, fields []string) *Observer {
	oo, ok := d.child(o, name)
	if !ok {
		return nil
	}
	var perTenant *bool
	if v, ok := d.boolean(oo, "per_tenant"); ok {
		perTenant = &v
	}
	if oo.has("http") == oo.has("sql") {
		d.ps.add(oo.line, oo.path, "declare exactly one of http and sql")
		return nil
	}
	var bulk *SQLQuery
	if oo.has("bulk") {
		bulk = d.sqlQueryWith(oo, "bulk", bulkFields)
	}
	if oo.has("sql") {
		if q := d.sqlQueryWith(oo, "sql", fields); q != nil {
			return &Observer{SQL: q, Bulk: bulk, perTenant: perTenant}
		}
		return nil
	}
	h := d.httpObserver(oo, "http", fields, " (such as $.count)")
	if h == nil {
		return nil
	}
	return &Observer{HTTP: h, Bulk: bulk, perTenant: perTenant}
}

// httpObserver decodes an HTTP request that reads one number (method, default GET, path,
// query, headers, jsonpath) in field name of o; hint follows a missing jsonpath's problem.
func (d *decoder) httpObserver(o *object, name string, fields []string, hint string) *HTTPObserver {
	ho, ok := d.child(o, name)
	if !ok {
		return nil
	}
	h := &HTTPObserver{}
	d.requestWith(ho, &h.req, "GET", fields)
	h.Method, h.Path, h.Query, h.Headers = h.req.method, srcOf(h.req.path), srcOf(h.req.query), headerMap(h.req.headers)
	if s, ok := d.required(ho, "jsonpath", hint); ok {
		p, err := jsonpath.Parse(strings.TrimSpace(s))
		if err != nil {
			d.ps.add(ho.lineOf("jsonpath"), ho.at("jsonpath"), "bad JSONPath %q: %v", s, err)
			return nil
		}
		h.JSONPath, h.path = strings.TrimSpace(s), p
	}
	return h
}

// fingerprintIgnore decodes an operation's fingerprint_ignore: JSONPaths of body fields
// ($.field, $.a.b, $.items[0]) and ?name query parameters; in a form body each path names one
// form field (forms: $.metadata.ref and $['metadata[ref]'] both name metadata[ref]).
func (d *decoder) fingerprintIgnore(o *object, format BodyFormat) (out, forms []string) {
	paths, ok := d.strings(o, "fingerprint_ignore")
	if !ok {
		return nil, nil
	}
	for i, p := range paths {
		p = strings.TrimSpace(p)
		at := fmt.Sprintf("%s[%d]", o.at("fingerprint_ignore"), i)
		switch {
		case strings.HasPrefix(p, "?") && len(p) > 1:
		case strings.HasPrefix(p, "$") && format == BodyForm:
			name, err := FormFieldName(p)
			if err != nil {
				d.ps.add(o.lineOf("fingerprint_ignore"), at, "in a form body: %v", err)
				continue
			}
			forms = append(forms, name)
		case strings.HasPrefix(p, "$"):
			if _, err := jsonpath.Parse(p); err != nil {
				d.ps.add(o.lineOf("fingerprint_ignore"), at, "bad JSONPath %q: %v", p, err)
				continue
			}
		default:
			d.ps.add(o.lineOf("fingerprint_ignore"), at, "must be a JSONPath such as $.note or a query parameter such as ?dry, got %q", p)
			continue
		}
		out = append(out, p)
	}
	return out, forms
}
