package targets

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
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
	// Outcome says how the client reports how an operation ended: ok, failed (clients[].failure
	// or outcome.failed) and pending (outcome.pending).
	Outcome ClientOutcome
	// Ops says what each operation of a scenario is given and how the client is asked for a
	// second operation with the first one's business reference.
	Ops ClientOps
	// Operations are the API operations the client calls.
	Operations []*ClientOperation
	// Retry is the retry policy the client declares (the defaults are the source articles').
	Retry RetryPolicy
	// Errors are how the API writes its error answers to this client's operations (nil: the
	// harness's own body); see ErrorFor.
	Errors ErrorAnswers

	configs []*ClientConfiguration // clients[].configurations; see Configurations
	command []*tmpl
	env     map[string]*tmpl
	envKeys []string
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
	// Params are the second operation's parameters over ClientOps.Params.
	Params map[string]any
	// Env are environment values the client reads (templates over ClientVars).
	Env map[string]string

	env map[string]*tmpl
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
	// Ops is how many operations to perform: every one the scenario asks for, the second one
	// with the first one's reference (ops.same_ref) included.
	Ops string
	// OpsFile is a JSON file [{"ref": ..., "params": {...}}] of the operations, every one.
	OpsFile string
	// Restart is "0" on the client's first start in a scenario and "1" when the harness starts
	// it again after killing it (restart-reuses-key): a CLI whose contract is "after a crash,
	// run again to resume only" reads it, e.g. OPS: '{{if eq .Restart "1"}}0{{else}}{{.Ops}}{{end}}'.
	Restart string
}

// ResponseVars are what a success response template sees: the attempt's key, the record's
// number and the operation's first identity value.
type ResponseVars struct {
	Key, Seq, Ref string
}

// clientVarFields and responseFields are the placeholders of a client's templates.
var (
	clientVarFields = []string{"URL", "CAFile", "State", "Ref", "Ops", "OpsFile", "Restart"}
	responseFields  = []string{"Key", "Seq", "Ref"}
)

// Defaults of a client.
const (
	// DefaultClientTimeout bounds one scenario of a client that declares no timeout.
	DefaultClientTimeout = time.Minute
	// DefaultResponseBody is the success answer's body when none is declared.
	DefaultResponseBody = `{"id": "op_{{.Seq}}", "ref": {{json .Ref}}, "status": "succeeded"}`
)

// clients decodes the clients list.
func (d *decoder) clients(top *object) []*Client {
	nodes, _ := d.list(top, "clients")
	var out []*Client
	seen := map[string]int{}
	for i, n := range nodes {
		o, ok := d.object(n, fmt.Sprintf("clients[%d]", i), "clients[]")
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
		c.Outcome = d.clientOutcome(o)
		c.Ops = d.clientOps(o)
		c.Errors = d.clientErrors(o)
		c.Operations = d.clientOperations(o)
		c.Retry = d.retryPolicy(o, DefaultRetryPolicy())
		d.clientConfigurations(o, c)
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

// clientOps decodes what a scenario gives the client's operations.
func (d *decoder) clientOps(o *object) ClientOps {
	var ops ClientOps
	if !o.has("ops") {
		return ops
	}
	oo, ok := d.child(o, "ops")
	if !ok {
		return ops
	}
	ops.Params = d.params(oo, "params")
	if oo.has("same_ref") {
		so, ok := d.child(oo, "same_ref")
		if ok {
			sr := &SameRef{Params: d.params(so, "params"), Env: map[string]string{}, env: map[string]*tmpl{}}
			for _, h := range d.envMap(so, "env") {
				sr.Env[h.Name] = h.Value
				if t, ok := d.compile(h.Value, srcPos{line: h.line}, so.at("env")+"."+h.Name, clientVarFields); ok {
					sr.env[h.Name] = t
				}
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

// RenderEnv returns the second operation's environment values for a scenario, each rendered
// over the scenario's ClientVars.
func (sr *SameRef) RenderEnv(v ClientVars) (map[string]string, error) {
	out := make(map[string]string, len(sr.Env))
	for k, val := range sr.Env {
		t := sr.env[k]
		if t == nil { // built by hand, not decoded: the value as it is
			out[k] = val
			continue
		}
		s, err := t.render(v)
		if err != nil {
			return nil, fmt.Errorf("ops.same_ref.env.%s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
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
	env := slices.Collect(maps.Values(c.Env))
	if c.Ops.SameRef != nil {
		env = append(env, slices.Collect(maps.Values(c.Ops.SameRef.Env))...)
	}
	return slices.ContainsFunc(c.Command, uses) || slices.ContainsFunc(env, uses)
}
