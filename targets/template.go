package targets

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/goccy/go-yaml/ast"
)

// Vars are the values a request template sees: {{.Ref}}, {{.Key}} and {{.Tenant}}.
type Vars struct {
	// Ref is unique per operation and per run (records persist between runs); it carries the run's id.
	Ref string
	// Key is the idempotency key of the attempt.
	Key string
	// Tenant is the name of the tenant the request is sent as ("" when none).
	Tenant string
	// Ms is the delay a slow hook asks for, in milliseconds (hooks.slow only).
	Ms string
}

// LifecycleVars are the values lifecycle command and env templates see: the request Vars plus what
// the harness assigns to the process it starts.
type LifecycleVars struct {
	Vars
	// Addr is the host:port the started instance must listen on.
	Addr string
	// Downstream is the URL of the harness's downstream sink the target must call.
	Downstream string
	// Storage is the host:port (usually a fault proxy) the target must use to reach its store.
	Storage string
	// Broker is the host:port (a fault proxy) a queue consumer must use to reach its broker.
	Broker string
	// EventsURL is the URL of the harness's receiver an API delivers its webhook events to
	// (publishes[].webhook).
	EventsURL string
	// EventsBroker is the host:port (a fault proxy) an API must use to reach where its events go:
	// the broker of its first declared event, or the harness's receiver for a webhook event.
	EventsBroker string
}

var (
	requestFields   = []string{"Ref", "Key", "Tenant"}
	lifecycleFields = []string{"Ref", "Key", "Tenant", "Addr", "Downstream", "Storage", "Broker", "EventsURL", "EventsBroker"}
	allFields       = []string{"Ref", "Key", "Tenant", "Ms", "Addr", "Downstream", "Storage", "Run", "Seq", "Prefix",
		"EventID", "Object", "Version", "Time", "Type", "Broker", "EventsURL", "EventsBroker", "URL", "CAFile", "State", "Ops", "OpsFile", "Status", "Text",
		"Restart", // the client side's {{.Restart}}
		"Operation",
		"ID"} // an async operation's {{.ID}}
	sampleVars      = Vars{Ref: "rs-sample-ref", Key: "rs-sample-key", Tenant: "sample-tenant"}
	sampleLifecycle = LifecycleVars{Vars: sampleVars, Addr: "127.0.0.1:1", Downstream: "http://127.0.0.1:2/charge", Storage: "127.0.0.1:3",
		Broker: "127.0.0.1:4", EventsURL: "http://127.0.0.1:5/events", EventsBroker: "127.0.0.1:6"}
)

// templateFuncs are the functions templates may call besides text/template's built-ins (printf,
// urlquery, js, html, len, index, ...): json writes its argument as a JSON value, so
// {"note": {{json .Ref}}} is valid JSON whatever Ref holds.
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// tmpl is one validated template. A source without "{{" renders to itself.
type tmpl struct {
	src string
	t   *template.Template
	// parts, when not nil, render the template without text/template (a load run renders
	// thousands a second): the template is only text, {{.Field}} and {{json .Field}}.
	parts []part
}

// part is a piece of a simple template: literal text, or a field's value, JSON-encoded when
// json is set.
type part struct {
	text  string
	field string
	json  bool
}

// simpleParts returns the parts of a template made only of text, {{.Field}} and
// {{json .Field}} actions; nil for any other.
func simpleParts(t *template.Template) []part {
	if len(t.Templates()) != 1 || t.Tree == nil || t.Root == nil {
		return nil
	}
	var parts []part
	for _, n := range t.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			parts = append(parts, part{text: string(n.Text)})
		case *parse.ActionNode:
			p := n.Pipe
			if p == nil || p.IsAssign || len(p.Decl) > 0 || len(p.Cmds) != 1 {
				return nil
			}
			args := p.Cmds[0].Args
			isJSON := len(args) == 2
			if isJSON {
				if id, ok := args[0].(*parse.IdentifierNode); !ok || id.Ident != "json" {
					return nil
				}
				args = args[1:]
			}
			f, ok := args[0].(*parse.FieldNode)
			if len(args) != 1 || !ok || len(f.Ident) != 1 {
				return nil
			}
			parts = append(parts, part{field: f.Ident[0], json: isJSON})
		default:
			return nil
		}
	}
	return parts
}

// varField returns the value of the named field of Vars or LifecycleVars.
func varField(v any, name string) (string, bool) {
	switch v := v.(type) {
	case Vars:
		switch name {
		case "Ref":
			return v.Ref, true
		case "Key":
			return v.Key, true
		case "Tenant":
			return v.Tenant, true
		case "Ms":
			return v.Ms, true
		}
	case EventVars:
		switch name {
		case "EventID":
			return v.EventID, true
		case "Object":
			return v.Object, true
		case "Version":
			return v.Version, true
		case "Time":
			return v.Time, true
		case "Type":
			return v.Type, true
		case "Ref":
			return v.Ref, true
		case "Ms":
			return v.Ms, true
		case "When":
			return v.When, true
		case "Operation":
			return v.Operation, true
		}
	case BulkVars:
		if name == "Prefix" {
			return v.Prefix, true
		}
	case KeyVars:
		switch name {
		case "Run":
			return v.Run, true
		case "Seq":
			return v.Seq, true
		}
	case LifecycleVars:
		switch name {
		case "Addr":
			return v.Addr, true
		case "Downstream":
			return v.Downstream, true
		case "Storage":
			return v.Storage, true
		case "Broker":
			return v.Broker, true
		case "EventsURL":
			return v.EventsURL, true
		case "EventsBroker":
			return v.EventsBroker, true
		}
		return varField(v.Vars, name)
	case ClientVars:
		switch name {
		case "URL":
			return v.URL, true
		case "CAFile":
			return v.CAFile, true
		case "State":
			return v.State, true
		case "Ref":
			return v.Ref, true
		case "Ops":
			return v.Ops, true
		case "OpsFile":
			return v.OpsFile, true
		case "Restart": // the client side's {{.Restart}}
			return v.Restart, true
		}
	case ErrorVars:
		switch name {
		case "Status":
			return v.Status, true
		case "Text":
			return v.Text, true
		case "Ref":
			return v.Ref, true
		case "Key":
			return v.Key, true
		case "Seq":
			return v.Seq, true
		}
	case IDVars:
		if name == "ID" {
			return v.ID, true
		}
		return varField(v.Vars, name)
	case ResponseVars:
		switch name {
		case "Key":
			return v.Key, true
		case "Seq":
			return v.Seq, true
		case "Ref":
			return v.Ref, true
		}
	}
	return "", false
}

// renderParts renders simple parts with the values of v (Vars or LifecycleVars); ok is
// false when a field is missing (text/template then reports the error).
func renderParts(parts []part, v any) (string, bool) {
	var b strings.Builder
	for _, p := range parts {
		if p.field == "" {
			b.WriteString(p.text)
			continue
		}
		val, ok := varField(v, p.field)
		if !ok {
			return "", false
		}
		if p.json {
			j, _ := json.Marshal(val) // a string always marshals
			b.Write(j)
			continue
		}
		b.WriteString(val)
	}
	return b.String(), true
}

// data is what text/template sees: every field of Vars or LifecycleVars by name (and an
// event's list of operations, {{.Operations}}).
func (t *tmpl) data(v any) map[string]any {
	m := map[string]any{}
	for _, name := range allFields {
		if val, ok := varField(v, name); ok {
			m[name] = val
		}
	}
	if ev, ok := v.(EventVars); ok {
		m["Operations"] = ev.Operations
	}
	return m
}

// render executes the template with Vars or LifecycleVars.
func (t *tmpl) render(v any) (string, error) {
	if t == nil {
		return "", nil
	}
	if t.t == nil {
		return t.src, nil
	}
	if t.parts != nil {
		if s, ok := renderParts(t.parts, v); ok {
			return s, nil
		}
	}
	return t.execute(v)
}

// execute renders the template with text/template.
func (t *tmpl) execute(v any) (string, error) {
	var b strings.Builder
	if err := t.t.Execute(&b, t.data(v)); err != nil {
		return "", fmt.Errorf("%s", cleanTemplateErr(err.Error()))
	}
	return b.String(), nil
}

var templateErrRe = regexp.MustCompile(`^template: t:(\d+):(?:\d+:)? ?(?:executing "t" at <[^>]*>: )?`)

func cleanTemplateErr(msg string) string {
	return templateErrRe.ReplaceAllString(msg, "")
}

// srcPos is where a template's source starts in the file. Only literal block scalars (|) keep
// their line breaks, so only they map lines inside the template precisely.
type srcPos struct {
	line    int
	literal bool
}

func posOf(n ast.Node) srcPos {
	lit, ok := n.(*ast.LiteralNode)
	return srcPos{line: lineOf(n), literal: ok && strings.HasPrefix(lit.GetToken().Value, "|")}
}

// at maps a 1-based line inside the template source to a file line.
func (p srcPos) at(rel int) int {
	if p.literal {
		return p.line + rel
	}
	return p.line
}

// tmplField reads the named field as a template that may use the given placeholders, reporting
// parse errors, unknown placeholders and render errors with their lines.
func (d *decoder) tmplField(o *object, name string, known []string) (*tmpl, bool) {
	if !o.has(name) {
		return nil, false
	}
	node := o.fields[name].val
	src, ok := d.scalar(node, o.at(name))
	if !ok {
		return nil, false
	}
	return d.compile(src, posOf(node), o.at(name), known)
}

// compile parses src as a template found at the given position, for the field at path.
func (d *decoder) compile(src string, at srcPos, path string, known []string) (*tmpl, bool) {
	if !strings.Contains(src, "{{") {
		return &tmpl{src: src}, true
	}
	t, err := template.New("t").Funcs(templateFuncs).Option("missingkey=error").Parse(src)
	if err != nil {
		msg := err.Error()
		rel := 1
		if m := regexp.MustCompile(`^template: t:(\d+):`).FindStringSubmatch(msg); m != nil {
			rel, _ = strconv.Atoi(m[1])
		}
		d.ps.add(at.at(rel), path, "bad template: %s", cleanTemplateErr(msg))
		return nil, false
	}
	ok := true
	var check func(n parse.Node)
	report := func(pos parse.Pos, ident []string) {
		if len(ident) == 1 && slices.Contains(known, ident[0]) {
			return
		}
		ok = false
		ph := "{{." + strings.Join(ident, ".") + "}}"
		rel := 1 + strings.Count(src[:min(int(pos), len(src))], "\n")
		names := make([]string, len(known))
		for i, k := range known {
			names[i] = "." + k
		}
		hint := ""
		if len(ident) == 1 && slices.Contains(lifecycleFields, ident[0]) {
			hint = fmt.Sprintf("; %s is only known in lifecycle.command and lifecycle.env", ph)
		} else if len(ident) == 1 {
			hint = suggestPlaceholder(ident[0], known)
		}
		d.ps.add(at.at(rel), path, "unknown placeholder %s (known: %s)%s", ph, strings.Join(names, ", "), hint)
	}
	check = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					check(c)
				}
			}
		case *parse.ActionNode:
			check(n.Pipe)
		case *parse.IfNode:
			check(n.Pipe)
			check(n.List)
			check(n.ElseList)
		case *parse.RangeNode:
			check(n.Pipe)
			check(n.List)
			check(n.ElseList)
		case *parse.WithNode:
			check(n.Pipe)
			check(n.List)
			check(n.ElseList)
		case *parse.TemplateNode:
			check(n.Pipe)
		case *parse.PipeNode:
			if n != nil {
				for _, c := range n.Cmds {
					check(c)
				}
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				check(a)
			}
		case *parse.FieldNode:
			report(n.Pos, n.Ident)
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				report(n.Pos, n.Ident[1:])
			}
		case *parse.ChainNode:
			ok = false
			d.ps.add(at.at(1), path, "unsupported placeholder %s (use .%s directly)", n.String(), strings.Join(known, ", ."))
		}
	}
	for _, tt := range t.Templates() {
		check(tt.Root)
	}
	if !ok {
		return nil, false
	}
	out := &tmpl{src: src, t: t, parts: simpleParts(t)}
	sample := sampleFor(known)
	if _, err := out.render(sample); err != nil {
		d.ps.add(at.line, path, "template fails with sample values: %v", err)
		return nil, false
	}
	return out, true
}

// sampleFor returns sample values for templates that know these placeholders.
func sampleFor(known []string) any {
	switch {
	case slices.Contains(known, "Status"):
		return sampleError
	case slices.Contains(known, "ID"):
		return IDVars{Vars: sampleVars, ID: "sample-id"}
	case slices.Contains(known, "OpsFile"):
		return ClientVars{URL: "http://127.0.0.1:8080", CAFile: "/tmp/ca.pem", State: "/tmp/state", Ref: "rs-sample", Ops: "3", OpsFile: "/tmp/ops.json"}
	case slices.Contains(known, "Key") && slices.Contains(known, "Seq"):
		return ResponseVars{Key: "k-sample", Seq: "1", Ref: "rs-sample-1"}
	case slices.Contains(known, "EventID"):
		v := EventVars{EventID: "evt_sample", Object: "obj_sample", Version: "3", Time: "2026-01-01T00:00:00Z", Type: "sample.updated", Ref: "rs-sample-ref",
			Operation: sampleOperation, Operations: []string{sampleOperation}}
		if slices.Contains(known, "Ms") {
			v.Ms = "1000"
		}
		if slices.Contains(known, "When") {
			v.When = FailBeforeEffect
		}
		return v
	case slices.Contains(known, "Seq"):
		return KeyVars{Run: "rs-sample", Seq: "1"}
	case slices.Contains(known, "Prefix"):
		return BulkVars{Prefix: "rs-sample-"}
	case slices.Contains(known, "Addr"):
		return sampleLifecycle
	case slices.Contains(known, "Ms"):
		v := sampleVars
		v.Ms = "1000"
		return v
	}
	return sampleVars
}

func suggestPlaceholder(s string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, s) || EditDistance(strings.ToLower(s), strings.ToLower(k)) <= 2 {
			return fmt.Sprintf("; did you mean {{.%s}}?", k)
		}
	}
	return ""
}

// uses reports whether the template refers to the field ({{.Field}}, {{json .Field}}).
func (t *tmpl) uses(field string) bool { return t != nil && strings.Contains(t.src, "."+field) }
