package targets

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/theory/jsonpath"
)

// ClientOperation is one API operation a client calls.
type ClientOperation struct {
	Name string
	// Method is the request's method (default POST).
	Method string
	// Path is a literal path or a pattern with {name} segments (each matches one segment).
	Path string
	// Key says where the client sends its idempotency key.
	Key KeySpec
	// BodyFormat is json (default) or form.
	BodyFormat BodyFormat
	// Identity names what stays the same across the attempts of one logical operation: body
	// fields ($.ref, $.metadata.ref), form fields (in a form body $.metadata.ref and
	// $['metadata[ref]'] both name the field metadata[ref]), headers (header:NAME) or query
	// parameters (query:NAME).
	Identity []string
	// Response is the success answer.
	Response ClientResponse
	// Errors are this operation's error answers, merged over the client's key by key.
	Errors ErrorAnswers

	pattern  *regexp.Regexp
	identity []identityPart
}

// ClientResponse is the success answer of a client operation: a status and a body template
// over ResponseVars.
type ClientResponse struct {
	Status  int
	Body    string
	Headers map[string]string

	body    *tmpl
	headers []header
}

// identityPart is one declared identity field.
type identityPart struct {
	src    string
	header string
	query  string
	path   *jsonpath.Path
	form   string
	last   string // the field's own name: its last member, header or parameter name
}

// clientOperations decodes a client's operations (at least one).
func (d *decoder) clientOperations(o *object) []*ClientOperation {
	nodes, ok := d.list(o, "operations")
	if !ok || len(nodes) == 0 {
		d.ps.add(o.line, o.at("operations"), "missing required field (the API operations the client calls: method, path, key, identity)")
		return nil
	}
	var out []*ClientOperation
	seen := map[string]int{}
	for i, n := range nodes {
		oo, ok := d.object(n, fmt.Sprintf("%s[%d]", o.at("operations"), i), o.sub("operations")+"[]")
		if !ok {
			continue
		}
		op := &ClientOperation{Name: d.uniqueName(oo, "client operation", seen), Method: "POST", BodyFormat: BodyJSON}
		if s, ok := d.str(oo, "method"); ok {
			op.Method = strings.ToUpper(strings.TrimSpace(s))
		}
		if s, ok := d.required(oo, "path", " (such as /v1/payments or /v1/{name})"); ok {
			op.Path = strings.TrimSpace(s)
			op.pattern = pathPattern(op.Path)
			if !strings.HasPrefix(op.Path, "/") {
				d.ps.add(oo.lineOf("path"), oo.at("path"), "must start with /, got %q", s)
			}
		}
		if s, ok := d.str(oo, "body_format"); ok {
			switch f := BodyFormat(strings.TrimSpace(s)); f {
			case BodyJSON, BodyForm:
				op.BodyFormat = f
			default:
				d.ps.add(oo.lineOf("body_format"), oo.at("body_format"), "must be json or form, got %q", s)
			}
		}
		op.Key = d.clientKey(oo)
		d.identity(oo, op)
		op.Response = d.clientResponse(oo)
		op.Errors = d.clientErrors(oo)
		out = append(out, op)
	}
	return out
}

// clientKey decodes where a client sends its key: a header (default Idempotency-Key), a query
// parameter or a body field.
func (d *decoder) clientKey(o *object) KeySpec {
	k := KeySpec{In: KeyInHeader, Name: "Idempotency-Key"}
	if !o.has("key") {
		return k
	}
	ko, ok := d.child(o, "key")
	if !ok {
		return k
	}
	if s, ok := d.str(ko, "in"); ok {
		switch KeyLocation(strings.TrimSpace(s)) {
		case KeyInHeader, KeyInQuery, KeyInBody:
			k.In = KeyLocation(strings.TrimSpace(s))
		default:
			d.ps.add(ko.lineOf("in"), ko.at("in"), "must be header, query or body, got %q", s)
		}
	}
	switch s, ok := d.str(ko, "name"); {
	case ok:
		k.Name = strings.TrimSpace(s)
	case k.In != KeyInHeader:
		d.ps.add(ko.line, ko.at("name"), "missing required field (the %s field that carries the key)", k.In)
	}
	return k
}

// identity decodes what stays the same across the attempts of one logical operation.
func (d *decoder) identity(o *object, op *ClientOperation) {
	list, ok := d.strings(o, "identity")
	if !ok || len(list) == 0 {
		d.ps.add(o.line, o.at("identity"), "missing required field (what stays the same across the attempts of one operation, e.g. [$.ref, $.amount])")
		return
	}
	for i, s := range list {
		s = strings.TrimSpace(s)
		at := fmt.Sprintf("%s[%d]", o.at("identity"), i)
		part := identityPart{src: s}
		switch {
		case strings.HasPrefix(s, "header:"):
			part.header = strings.TrimPrefix(s, "header:")
			part.last = part.header
			if !validHeaderName(part.header) {
				d.ps.add(o.lineOf("identity"), at, "%q is not a valid header name", part.header)
			}
		case strings.HasPrefix(s, "query:"):
			part.query = strings.TrimPrefix(s, "query:")
			part.last = part.query
		case strings.HasPrefix(s, "$") && op.BodyFormat == BodyForm:
			name, err := FormFieldName(s)
			if err != nil {
				d.ps.add(o.lineOf("identity"), at, "in a form body: %v", err)
				continue
			}
			part.form = name
			segs, _ := fieldSegments(s)
			part.last = lastName(segs)
		case strings.HasPrefix(s, "$"):
			segs, err := fieldSegments(s)
			if err != nil {
				d.ps.add(o.lineOf("identity"), at, "%v", err)
				continue
			}
			part.path, _ = jsonpath.Parse(s)
			part.last = lastName(segs)
		default:
			d.ps.add(o.lineOf("identity"), at, "must be a body field ($.ref), header:NAME or query:NAME, got %q", s)
		}
		op.Identity = append(op.Identity, s)
		op.identity = append(op.identity, part)
	}
}

// clientResponse decodes the success answer of a client operation.
func (d *decoder) clientResponse(o *object) ClientResponse {
	r := ClientResponse{Status: 201, Body: DefaultResponseBody}
	r.body, _ = d.compile(DefaultResponseBody, srcPos{}, o.at("response"), responseFields)
	if !o.has("response") {
		return r
	}
	ro, ok := d.child(o, "response")
	if !ok {
		return r
	}
	if v, ok := d.integer(ro, "status", 200, 299); ok {
		r.Status = v
	}
	if tp, ok := d.tmplField(ro, "body", responseFields); ok {
		r.body, r.Body = tp, tp.src
	}
	r.headers, _ = d.tmplHeaders(ro, responseFields)
	r.Headers = headerMap(r.headers)
	return r
}

// pathPattern compiles a path with {name} segments into a regular expression over the whole path.
func pathPattern(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i, seg := range strings.Split(p, "/") {
		if i > 0 {
			b.WriteString("/")
		}
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			b.WriteString("[^/]+")
		} else {
			b.WriteString(regexp.QuoteMeta(seg))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Matches reports whether a request's method and path are this operation's.
func (op *ClientOperation) Matches(method, path string) bool {
	return strings.EqualFold(method, op.Method) && op.pattern != nil && op.pattern.MatchString(path)
}

// lastName is the name of the last member a path names ("" when it ends with an index).
func lastName(segs []fieldSeg) string {
	if last := segs[len(segs)-1]; !last.isIdx {
		return last.name
	}
	return ""
}
