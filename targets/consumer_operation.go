package targets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/theory/jsonpath"
)

// An event's delivery identity (event.id) is not its business identity: two messages can carry
// one approved action (a relay that lost its state publishes it again under a new id, a person
// replays it), and one message can name several operations (an order's items). A file says where
// an event names the operation it applies (event.operation: {{.Operation}}) or the several it
// applies (event.operations: {{.Operations}}), and whether the consumer promises one effect per
// operation (operation_dedupe). Effects are then counted per operation: the effects observer is
// asked with {{.Operation}}, once per operation an event names.

// EventOperation says where an event names its business operation, or its several operations.
type EventOperation struct {
	// Header names the header (of the webhook request, or of the queue message) that carries the
	// one operation; "" = the body.
	Header string
	// Path is the body's member that carries the one operation (a singular JSONPath, such as
	// $.data.payment_id), or, for event.operations, the JSONPath that selects each of them (such
	// as $.data.items[*].id).
	Path string

	path *jsonpath.Path
}

// NamesOperation reports whether the file says where an event names its operation (or
// operations): its effects are then counted per operation.
func (c *Consumer) NamesOperation() bool {
	return c.Event.Operation != nil || c.Event.Operations != nil
}

// NamesOperations reports whether an event can name several operations (event.operations).
func (c *Consumer) NamesOperations() bool { return c.Event.Operations != nil }

// OperationOf returns the one operation an event names where event.operation says (its body,
// or header(NAME) for a header), for an event the harness did not render (observed on its way
// from an API): "" and false when the file declares no event.operation or the event carries none
// there.
func (c *Consumer) OperationOf(body []byte, header func(string) string) (string, bool) {
	op := c.Event.Operation
	switch {
	case op == nil:
		return "", false
	case op.Header != "":
		if header == nil {
			return "", false
		}
		v := strings.TrimSpace(header(op.Header))
		return v, v != ""
	}
	v, err := member(body, op.path, op.Path)
	return v, err == nil
}

// OperationsOf returns the operations an event names where event.operations says (nil when the
// file declares none or the body names none there).
func (c *Consumer) OperationsOf(body []byte) []string {
	if c.Event.Operations == nil {
		return nil
	}
	return selectTexts(body, c.Event.Operations.path)
}

// selectTexts returns the text of each node the path selects in a JSON body (a string's value,
// any other value's JSON); nil when the body is not JSON.
func selectTexts(body []byte, p *jsonpath.Path) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if p == nil || dec.Decode(&doc) != nil {
		return nil
	}
	var out []string
	for _, n := range p.Select(doc) {
		b, _ := json.Marshal(n)
		out = append(out, jsonText(b))
	}
	return out
}

// eventOperation decodes event.operation: exactly one of header: NAME and jsonpath: PATH (one
// member).
func (d *decoder) eventOperation(eo *object, c *Consumer) {
	if !eo.has("operation") {
		return
	}
	oo, ok := d.child(eo, "operation")
	if !ok {
		return
	}
	if oo.has("header") == oo.has("jsonpath") {
		d.ps.add(oo.line, eo.at("operation"), "declare exactly one of header: NAME and jsonpath: PATH (where an event names the business operation it applies, such as $.data.payment_id)")
		return
	}
	if oo.has("header") {
		s, _ := d.str(oo, "header")
		name := strings.TrimSpace(s)
		if !validHeaderName(name) {
			d.ps.add(oo.lineOf("header"), oo.at("header"), "%q is not a valid header name", s)
			return
		}
		c.Event.Operation = &EventOperation{Header: name}
		return
	}
	if p, src := d.memberPath(oo, "jsonpath"); p != nil {
		c.Event.Operation = &EventOperation{Path: src, path: p}
	}
}

// eventOperations decodes event.operations: jsonpath: PATH, a query that selects each operation
// an event names (such as $.data.items[*].id).
func (d *decoder) eventOperations(eo *object, c *Consumer) {
	if !eo.has("operations") {
		return
	}
	oo, ok := d.child(eo, "operations")
	if !ok {
		return
	}
	s, ok := d.required(oo, "jsonpath", " (the JSONPath that selects each operation an event names, such as $.data.items[*].id)")
	if !ok {
		return
	}
	src := strings.TrimSpace(s)
	p, err := jsonpath.Parse(src)
	switch {
	case err != nil:
		d.ps.add(oo.lineOf("jsonpath"), oo.at("jsonpath"), "bad JSONPath %q: %v", s, err)
	case len(p.Query().Segments()) == 0:
		d.ps.add(oo.lineOf("jsonpath"), oo.at("jsonpath"), "names nothing: %q is the whole document (such as $.data.items[*].id)", src)
	default:
		c.Event.Operations = &EventOperation{Path: src, path: p}
	}
}

// operationDedupe decodes operation_dedupe, which needs a place where events name operations
// (eo: the event's object, nil when it has none).
func (d *decoder) operationDedupe(o, eo *object, c *Consumer) {
	v, ok := d.boolean(o, "operation_dedupe")
	if !ok {
		return
	}
	c.OperationDedupe = v
	if v && !operationsDeclared(eo) {
		d.ps.add(o.lineOf("operation_dedupe"), o.at("operation_dedupe"),
			"promises one effect per business operation: say where an event names it (event.operation: {jsonpath: $.data.payment_id} or {header: NAME}, or event.operations)")
	}
}

// operationsDeclared reports whether the event's object declares event.operation or
// event.operations (decoded or not).
func operationsDeclared(eo *object) bool {
	return eo != nil && (eo.has("operation") || eo.has("operations"))
}

// Sample operations the operation paths are checked with: the body rendered with them must name
// them where the file says.
var (
	sampleOperation  = "op_sample"
	sampleOperations = []string{"op_sample_1", "op_sample_2"}
)

// checkOperations checks what the file says about operations against its templates: the
// placeholders used only where a place is declared; a body that names the operation where
// event.operation or event.operations says (rendered with sample values); an effects observer
// asked per operation; an operation header the harness sets, not the file.
func (d *decoder) checkOperations(o, eo *object, c *Consumer) {
	if !c.NamesOperation() {
		if operationsDeclared(eo) {
			return // declared, and wrong: said at its line
		}
		for field, t := range c.templates() {
			for _, ph := range []string{"Operation", "Operations"} {
				if usesPlaceholder(t, ph) {
					d.ps.add(o.lineOf(field), o.at(field), "uses {{.%s}}, but the event names no operation: declare event.operation (or event.operations) to say where the consumer reads it", ph)
				}
			}
		}
		return
	}
	if c.Effects != nil && !c.Effects.usesPlaceholder("Operation") {
		d.ps.add(o.lineOf("effects"), o.at("effects"),
			"must count the effects of one operation with {{.Operation}} (event.operation or event.operations is declared: effects are counted per operation, such as query: \"operation={{.Operation}}\")")
	}
	if op := c.Event.Operation; op != nil && op.Header != "" {
		for name := range c.Headers {
			if strings.EqualFold(name, op.Header) {
				d.ps.add(o.lineOf("headers"), o.at("headers")+"."+name, "is the operation's header (event.operation.header): the harness sets it to each event's {{.Operation}}")
			}
		}
	}
	if c.event == nil {
		return
	}
	sample := EventVars{EventID: "evt_sample", Object: "obj_sample", Version: "1", Time: "2026-01-01T00:00:00Z", Type: c.Event.Type, Ref: "rs-sample"}
	if op := c.Event.Operation; op != nil && op.Header == "" {
		v := sample
		v.Operation, v.Operations = sampleOperation, []string{sampleOperation}
		if got, err := d.renderedSample(c, v); err != nil {
			d.ps.add(eo.lineOf("operation"), eo.at("operation"), "%v", err)
		} else if name, ok := c.OperationOf(got, nil); !ok || name != sampleOperation {
			d.ps.add(eo.lineOf("operation"), eo.at("operation"), "%s does not find the event's {{.Operation}} in its body (rendered with the sample operation %q: %s)",
				op.Path, sampleOperation, clip(string(got)))
		}
	}
	if ops := c.Event.Operations; ops != nil {
		v := sample
		v.Operations = sampleOperations
		if got, err := d.renderedSample(c, v); err != nil {
			d.ps.add(eo.lineOf("operations"), eo.at("operations"), "%v", err)
		} else if names := c.OperationsOf(got); !slices.Equal(names, sampleOperations) {
			d.ps.add(eo.lineOf("operations"), eo.at("operations"), "%s selects %q in the body, want the event's {{.Operations}} %q (rendered with sample operations: %s)",
				ops.Path, names, sampleOperations, clip(string(got)))
		}
	}
}

// renderedSample renders the event body with sample values.
func (d *decoder) renderedSample(c *Consumer, v EventVars) ([]byte, error) {
	body, err := c.RenderEvent(v)
	if err != nil {
		return nil, fmt.Errorf("the body fails with sample operations: %v", err)
	}
	return body, nil
}

// templates are the consumer's templates that see an event, by the field of the consumer they
// are in.
func (c *Consumer) templates() map[string][]*tmpl {
	out := map[string][]*tmpl{"event": {c.event}, "path": {c.req.path, c.req.query}}
	for _, h := range append(slices.Clone(c.headers), c.req.headers...) {
		out["headers"] = append(out["headers"], h.tmpl)
	}
	for name, obs := range map[string]*Observer{"effects": c.Effects, "state": c.State} {
		out[name] = obs.templates()
	}
	return out
}

// templates are the observer's templates.
func (o *Observer) templates() []*tmpl {
	if o == nil {
		return nil
	}
	if o.SQL != nil {
		return []*tmpl{o.SQL.query}
	}
	out := []*tmpl{o.HTTP.req.path, o.HTTP.req.query}
	for _, h := range o.HTTP.req.headers {
		out = append(out, h.tmpl)
	}
	return out
}

// usesPlaceholder reports whether one of the observer's templates uses {{.NAME}}.
func (o *Observer) usesPlaceholder(name string) bool { return usesPlaceholder(o.templates(), name) }

// usesPlaceholder reports whether one of the templates uses {{.NAME}} ({{.Operation}}, not
// {{.Operations}}).
func usesPlaceholder(ts []*tmpl, name string) bool {
	re := regexp.MustCompile(`\.` + regexp.QuoteMeta(name) + `\b`)
	for _, t := range ts {
		if t != nil && re.MatchString(t.src) {
			return true
		}
	}
	return false
}
