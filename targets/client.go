package targets

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/theory/jsonpath"
)

// Client is one client of an idempotent API under test (the target file's clients): an SDK, a
// command-line tool or an integration that must reuse one key per logical operation, retry with
// backoff and jitter, and keep pending keys across a restart. The harness plays the API: it
// starts the client (Command) against a scripted server that fails on purpose, and judges what
// the client sent.
type Client struct {
	// Name identifies the client in reports and labels.
	Name string
	// Command starts the client (templates over ClientVars); empty for a client driven
	// in-process (suites.RunClientT).
	Command []string
	// Env holds extra environment variables (template values over ClientVars).
	Env map[string]string
	// Dir is the working directory ("" = the harness's), resolved against the target file.
	Dir string
	// HTTPS serves the scripted API over TLS with a CA the harness generates ({{.CAFile}}).
	HTTPS bool
	// Timeout bounds one scenario (one run of the client, restarts included).
	Timeout time.Duration
	// Failure says how the client reports a failed operation.
	Failure ClientFailure
	// Ops says what each operation of a scenario is given and how the client is asked for a
	// second operation with the first one's business reference.
	Ops ClientOps
	// Operations are the API operations the client calls.
	Operations []*ClientOperation
	// Retry is the retry policy the client declares (the defaults are the source articles').
	Retry RetryPolicy

	command []*tmpl
	env     map[string]*tmpl
	envKeys []string
}

// ClientFailure says how a client reports that an operation failed: an exit code, a line of its
// output matching a pattern, or either.
type ClientFailure struct {
	// ExitCode is the exit status of a run with a failed operation (nil: not declared).
	ExitCode *int
	// Output matches the output line that reports a failed operation (nil: not declared).
	Output *regexp.Regexp
}

// ClientOps is what a scenario gives the client's operations.
type ClientOps struct {
	// Params are each operation's parameters in {{.OpsFile}} (nil: none).
	Params map[string]any
	// SameRef asks for a second operation with the business reference of the first and other
	// content: its parameters as an {{.OpsFile}} entry, and/or environment values the client
	// reads (nil: not declared; new-key-per-operation then checks distinct references only).
	SameRef *SameRef
}

// SameRef is how a scenario asks for two operations with one business reference.
type SameRef struct {
	Params map[string]any
	Env    map[string]string
}

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
	// fields ($.ref), form fields ($.ref in a form body), headers (header:NAME) or query
	// parameters (query:NAME).
	Identity []string
	// Response is the success answer.
	Response ClientResponse

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
}

// ClientVars are what a client's command and env templates see.
type ClientVars struct {
	// URL is the scripted API's base URL (http://127.0.0.1:PORT, https:// with HTTPS).
	URL string
	// CAFile is the PEM file of the CA that signed the API's certificate (HTTPS only).
	CAFile string
	// State is a directory that survives a restart of the client within one scenario.
	State string
	// Ref is the scenario's unique business reference prefix.
	Ref string
	// Ops is how many operations to perform.
	Ops string
	// OpsFile is a JSON file [{"ref": ..., "params": {...}}] of the operations.
	OpsFile string
}

// ResponseVars are what a success response template sees: the attempt's key, the record's
// number and the operation's first identity value.
type ResponseVars struct {
	Key, Seq, Ref string
}

// clientVarFields and responseFields are the placeholders of a client's templates.
var (
	clientVarFields = []string{"URL", "CAFile", "State", "Ref", "Ops", "OpsFile"}
	responseFields  = []string{"Key", "Seq", "Ref"}
)

// Defaults of a client.
const (
	// DefaultClientTimeout bounds one scenario of a client that declares no timeout.
	DefaultClientTimeout = time.Minute
	// DefaultResponseBody is the success answer's body when none is declared.
	DefaultResponseBody = `{"id": "op_{{.Seq}}", "ref": {{json .Ref}}, "status": "succeeded"}`
)

var clientFields = []string{"name", "command", "env", "dir", "https", "timeout", "failure", "ops", "operations", "retry"}

// clients decodes the clients list.
func (d *decoder) clients(top *object) []*Client {
	nodes, _ := d.list(top, "clients")
	var out []*Client
	seen := map[string]int{}
	for i, n := range nodes {
		o, ok := d.object(n, fmt.Sprintf("clients[%d]", i), clientFields...)
		if !ok {
			continue
		}
		c := &Client{Name: d.uniqueName(o, "client", seen), Timeout: DefaultClientTimeout, env: map[string]*tmpl{}, Env: map[string]string{}}
		d.clientCommand(o, c)
		if s, ok := d.str(o, "dir"); ok {
			c.Dir = d.rel(s)
		}
		if v, ok := d.boolean(o, "https"); ok {
			c.HTTPS = v
		}
		if v, ok := d.duration(o, "timeout"); ok {
			c.Timeout = v
		}
		c.Failure = d.clientFailure(o)
		c.Ops = d.clientOps(o)
		c.Operations = d.clientOperations(o)
		c.Retry = d.retryPolicy(o)
		out = append(out, c)
	}
	return out
}

// clientCommand decodes a client's command and env.
func (d *decoder) clientCommand(o *object, c *Client) {
	if _, isSeq := o.fields["command"].val.(*ast.SequenceNode); o.has("command") && !isSeq {
		d.ps.add(o.lineOf("command"), o.at("command"), `must be a list of arguments, e.g. [./client, --api, "{{.URL}}"]`)
	} else if nodes, ok := d.list(o, "command"); ok {
		for i, n := range nodes {
			path := fmt.Sprintf("%s[%d]", o.at("command"), i)
			if s, ok := d.scalar(n, path); ok {
				c.Command = append(c.Command, s)
				if t, ok := d.compile(s, posOf(d.resolve(n)), path, clientVarFields); ok {
					c.command = append(c.command, t)
				}
			}
		}
	}
	for _, h := range d.envMap(o, "env") {
		c.Env[h.Name] = h.Value
		c.envKeys = append(c.envKeys, h.Name)
		if t, ok := d.compile(h.Value, srcPos{line: h.line}, o.at("env")+"."+h.Name, clientVarFields); ok {
			c.env[h.Name] = t
		}
	}
}

// clientFailure decodes how a client reports a failed operation.
func (d *decoder) clientFailure(o *object) ClientFailure {
	var f ClientFailure
	if !o.has("failure") {
		return f
	}
	fo, ok := d.object(o.fields["failure"].val, o.at("failure"), "exit_code", "output")
	if !ok {
		return f
	}
	if v, ok := d.integer(fo, "exit_code", 0, 255); ok {
		f.ExitCode = &v
	}
	if s, ok := d.str(fo, "output"); ok {
		re, err := regexp.Compile(s)
		if err != nil {
			d.ps.add(fo.lineOf("output"), fo.at("output"), "bad regular expression %q: %v", s, err)
		} else {
			f.Output = re
		}
	}
	if !fo.has("exit_code") && !fo.has("output") {
		d.ps.add(fo.line, o.at("failure"), "declare exit_code, output or both (how the client reports a failed operation)")
	}
	return f
}

// clientOps decodes what a scenario gives the client's operations.
func (d *decoder) clientOps(o *object) ClientOps {
	var ops ClientOps
	if !o.has("ops") {
		return ops
	}
	oo, ok := d.object(o.fields["ops"].val, o.at("ops"), "params", "same_ref")
	if !ok {
		return ops
	}
	ops.Params = d.params(oo, "params")
	if oo.has("same_ref") {
		so, ok := d.object(oo.fields["same_ref"].val, oo.at("same_ref"), "params", "env")
		if ok {
			sr := &SameRef{Params: d.params(so, "params"), Env: map[string]string{}}
			for _, h := range d.envMap(so, "env") {
				sr.Env[h.Name] = h.Value
			}
			if sr.Params == nil && len(sr.Env) == 0 {
				d.ps.add(so.line, oo.at("same_ref"), "declare params (an ops-file entry) or env (what the client reads) for the second operation")
			}
			ops.SameRef = sr
		}
	}
	return ops
}

// params decodes a mapping of operation parameters (scalars, kept with their YAML types).
func (d *decoder) params(o *object, name string) map[string]any {
	m, ok := d.mapping(o, name, "parameter names to values")
	if !ok {
		return nil
	}
	out := map[string]any{}
	for _, mv := range m.Values {
		key := mv.Key.GetToken().Value
		v, ok := d.scalar(mv.Value, o.at(name)+"."+key)
		if !ok {
			continue
		}
		switch d.resolve(mv.Value).(type) {
		case *ast.IntegerNode, *ast.FloatNode:
			out[key] = jsonNumber(v)
		case *ast.BoolNode:
			out[key] = v == "true"
		default:
			out[key] = v
		}
	}
	return out
}

// jsonNumber is a YAML number kept as written, for JSON.
type jsonNumber string

// MarshalJSON writes the number as it was written.
func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

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
		oo, ok := d.object(n, fmt.Sprintf("%s[%d]", o.at("operations"), i), "name", "method", "path", "key", "body_format", "identity", "response")
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
	ko, ok := d.object(o.fields["key"].val, o.at("key"), "in", "name")
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
			if !validHeaderName(part.header) {
				d.ps.add(o.lineOf("identity"), at, "%q is not a valid header name", part.header)
			}
		case strings.HasPrefix(s, "query:"):
			part.query = strings.TrimPrefix(s, "query:")
		case strings.HasPrefix(s, "$"):
			p, err := jsonpath.Parse(s)
			if err != nil {
				d.ps.add(o.lineOf("identity"), at, "bad JSONPath %q: %v", s, err)
				continue
			}
			part.path = p
			if op.BodyFormat == BodyForm {
				part.form = strings.TrimPrefix(s, "$.")
			}
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
	ro, ok := d.object(o.fields["response"].val, o.at("response"), "status", "body", "headers")
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

// Render returns a client's command and extra environment ("NAME=value") for one scenario.
func (c *Client) Render(v ClientVars) (argv, env []string, err error) {
	for i, t := range c.command {
		s, err := t.render(v)
		if err != nil {
			return nil, nil, fmt.Errorf("clients.%s.command[%d]: %w", c.Name, i, err)
		}
		argv = append(argv, s)
	}
	for _, k := range c.envKeys {
		s, err := c.env[k].render(v)
		if err != nil {
			return nil, nil, fmt.Errorf("clients.%s.env.%s: %w", c.Name, k, err)
		}
		env = append(env, k+"="+s)
	}
	return argv, env, nil
}

// Operation returns the client operation a request is for, or nil.
func (c *Client) Operation(method, path string) *ClientOperation {
	for _, op := range c.Operations {
		if op.Matches(method, path) {
			return op
		}
	}
	return nil
}

// UsesOpsFile reports whether the client's command or env reads {{.OpsFile}}.
func (c *Client) UsesOpsFile() bool {
	uses := func(s string) bool { return strings.Contains(s, ".OpsFile") }
	return slices.ContainsFunc(c.Command, uses) || slices.ContainsFunc(slices.Collect(maps.Values(c.Env)), uses)
}
