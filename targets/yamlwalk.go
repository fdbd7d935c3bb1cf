package targets

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// decoder walks the YAML AST of one target file, converting values and collecting problems with
// their line numbers. Every helper reports what is wrong and carries on, so that one pass finds
// every problem.
type decoder struct {
	ps    *problems
	warns problems // declarations that are valid but probably not meant
	env   func(string) (string, bool)
	// standIn makes an unset ${NAME} without a default a warning, with <NAME> standing in for
	// it, and drops the problems of the fields it stands in (validate, not run).
	standIn  bool
	standIns map[string]bool // the fields that hold a stand-in
	anchors  map[string]ast.Node
	dir      string // folder of the target file, for relative paths
}

// lineOf returns the 1-based line where n starts, 0 if unknown.
func lineOf(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// collectAnchors records every &anchor so that *aliases can be resolved, and reports aliases
// that name no anchor.
func (d *decoder) collectAnchors(n ast.Node) {
	var aliases []*ast.AliasNode
	ast.Walk(visitorFunc(func(n ast.Node) {
		switch v := n.(type) {
		case *ast.AnchorNode:
			if v.Name != nil {
				d.anchors[v.Name.GetToken().Value] = v.Value
			}
		case *ast.AliasNode:
			aliases = append(aliases, v)
		}
	}), n)
	for _, a := range aliases {
		name := ""
		if a.Value != nil {
			name = a.Value.GetToken().Value
		}
		if d.anchors[name] == nil {
			d.ps.add(lineOf(a), "", "alias *%s refers to no &anchor", name)
		}
	}
}

type visitorFunc func(ast.Node)

func (f visitorFunc) Visit(n ast.Node) ast.Visitor {
	f(n)
	return f
}

// resolve strips tags and anchors and follows aliases. It returns nil for a YAML null.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for range 64 {
		switch v := n.(type) {
		case nil:
			return nil
		case *ast.NullNode:
			return nil
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			if v.Value == nil {
				return nil
			}
			n = d.anchors[v.Value.GetToken().Value]
		default:
			return n
		}
	}
	return nil
}

// kindOf names the YAML kind of n for "must be X, got Y" messages.
func kindOf(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "true/false"
	case nil, *ast.NullNode:
		return "nothing"
	default:
		return "a string"
	}
}

// field is one key of a mapping.
type field struct {
	line int // line of the key
	val  ast.Node
}

// object is a decoded YAML mapping whose keys were checked against the fields its object of the
// registry accepts (fields.go).
type object struct {
	path   string
	schema string // the object's name in the registry of fields
	line   int
	fields map[string]field
}

// sub names, in the registry of fields, the object in the named field.
func (o *object) sub(name string) string { return subObject(o.schema, name) }

// at returns the dotted path of the named field.
func (o *object) at(name string) string {
	if o.path == "" {
		return name
	}
	return o.path + "." + name
}

// has reports whether the field is present with a non-null value.
func (o *object) has(name string) bool {
	f, ok := o.fields[name]
	return ok && f.val != nil
}

// lineOf returns the line of the named field, or of the mapping when the field is absent.
func (o *object) lineOf(name string) int {
	if f, ok := o.fields[name]; ok {
		return f.line
	}
	return o.line
}

// mappingEntries returns the key/value pairs of a mapping node, its own first, then those of merge
// keys (<<: *anchor), which the own keys override. local is the number of its own pairs.
func (d *decoder) mappingEntries(m *ast.MappingNode, path string, depth int) (entries []*ast.MappingValueNode, local int) {
	var own, merged []*ast.MappingValueNode
	for _, mv := range m.Values {
		if _, ok := mv.Key.(*ast.MergeKeyNode); !ok {
			own = append(own, mv)
			continue
		}
		srcs := []ast.Node{mv.Value}
		if seq, ok := d.resolve(mv.Value).(*ast.SequenceNode); ok {
			srcs = seq.Values
		}
		for _, src := range srcs {
			sm, ok := d.resolve(src).(*ast.MappingNode)
			if !ok || depth > 16 {
				d.ps.add(lineOf(mv), path, "merge key << must refer to a mapping")
				continue
			}
			more, _ := d.mappingEntries(sm, path, depth+1)
			merged = append(merged, more...)
		}
	}
	return append(own, merged...), len(own)
}

// object decodes n, at path in the file, as a mapping of the object named schema in the registry
// of fields (fields.go), which says the keys it accepts. Unknown and duplicate keys are problems.
// A null or absent node yields an empty object. ok is false when n is not a mapping.
func (d *decoder) object(n ast.Node, path, schema string) (*object, bool) {
	known := fieldsOf(schema)
	o := &object{path: path, schema: schema, line: lineOf(n), fields: map[string]field{}}
	rn := d.resolve(n)
	if rn == nil {
		return o, true
	}
	var m *ast.MappingNode
	switch v := rn.(type) {
	case *ast.MappingNode:
		m = v
	case *ast.MappingValueNode:
		m = &ast.MappingNode{Values: []*ast.MappingValueNode{v}}
	default:
		d.ps.add(lineOf(rn), path, "must be a mapping (key: value), got %s", kindOf(rn))
		return nil, false
	}
	if len(m.Values) > 0 {
		o.line = lineOf(m.Values[0].Key)
	}
	entries, local := d.mappingEntries(m, path, 0)
	for i, mv := range entries {
		key := mv.Key.GetToken().Value
		kl := lineOf(mv.Key)
		if prev, dup := o.fields[key]; dup {
			if i < local {
				d.ps.add(kl, o.at(key), "duplicate key (first set on line %d)", prev.line)
			}
			continue
		}
		if !slices.Contains(known, key) {
			d.ps.add(kl, o.at(key), "unknown field%s (known: %s)", suggest(key, known), strings.Join(known, ", "))
			o.fields[key] = field{line: kl}
			continue
		}
		o.fields[key] = field{line: kl, val: d.resolve(mv.Value)}
	}
	return o, true
}

// child decodes the object in the named field of o (see object).
func (d *decoder) child(o *object, name string) (*object, bool) {
	return d.object(o.fields[name].val, o.at(name), o.sub(name))
}

// scalar returns the text of a scalar node with ${NAME} expanded. ok is false (and a problem was
// recorded) when n is not a scalar or an environment variable is missing.
func (d *decoder) scalar(n ast.Node, path string) (string, bool) {
	n = d.resolve(n)
	var s string
	switch v := n.(type) {
	case nil:
		return "", true
	case *ast.StringNode:
		s = v.Value
	case *ast.LiteralNode:
		s = v.Value.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, true
	default:
		d.ps.add(lineOf(n), path, "must be a single value, got %s", kindOf(n))
		return "", false
	}
	out, errs, unset := expandEnv(s, d.env, d.standIn)
	for _, e := range errs {
		d.ps.add(lineOf(n), path, "%s", e)
	}
	for _, name := range unset {
		if !d.standIn {
			d.ps.add(lineOf(n), path, "environment variable %s is not set (set it, or give a default: ${%s:-value})", name, name)
			continue
		}
		d.warns.add(lineOf(n), path, "environment variable %s is not set: checked with <%s> in its place (a run needs it: set it, or give a default: ${%s:-value})", name, name, name)
		d.standIns[path] = true
		d.standIns[listField(path)] = true // a list's own checks ("must be ...") concern it too
	}
	return out, len(errs) == 0 && (d.standIn || len(unset) == 0)
}

// listField is the field of a list element's path ("a.b" for "a.b[2]").
func listField(path string) string {
	if i := strings.LastIndexByte(path, '['); i > 0 && strings.HasSuffix(path, "]") {
		return path[:i]
	}
	return path
}

// str returns the named field as a string; "" with ok=false when absent or invalid.
func (d *decoder) str(o *object, name string) (string, bool) {
	if !o.has(name) {
		return "", false
	}
	return d.scalar(o.fields[name].val, o.at(name))
}

// required returns the named string field, reporting it when it is absent or empty.
func (d *decoder) required(o *object, name, hint string) (string, bool) {
	if !o.has(name) {
		if _, present := o.fields[name]; !present {
			d.ps.add(o.line, o.at(name), "missing required field%s", hint)
		} else {
			d.ps.add(o.lineOf(name), o.at(name), "must not be empty%s", hint)
		}
		return "", false
	}
	s, ok := d.str(o, name)
	if ok && strings.TrimSpace(s) == "" {
		d.ps.add(o.lineOf(name), o.at(name), "must not be empty%s", hint)
		return "", false
	}
	return s, ok
}

// integer returns the named field as an int in [lo, hi].
func (d *decoder) integer(o *object, name string, lo, hi int) (int, bool) {
	s, ok := d.str(o, name)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < lo || v > hi {
		d.ps.add(o.lineOf(name), o.at(name), "must be an integer from %d to %d, got %q", lo, hi, s)
		return 0, false
	}
	return v, true
}

// status returns the named field as an HTTP status code.
func (d *decoder) status(o *object, name string) (int, bool) {
	return d.integer(o, name, 100, 599)
}

// boolean returns the named field as a bool.
func (d *decoder) boolean(o *object, name string) (bool, bool) {
	s, ok := d.str(o, name)
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	d.ps.add(o.lineOf(name), o.at(name), "must be true or false, got %q", s)
	return false, false
}

// list returns the elements of the named field; a single scalar counts as a one-element list.
func (d *decoder) list(o *object, name string) ([]ast.Node, bool) {
	if !o.has(name) {
		return nil, false
	}
	switch v := o.fields[name].val.(type) {
	case *ast.SequenceNode:
		return v.Values, true
	case *ast.MappingNode, *ast.MappingValueNode:
		d.ps.add(o.lineOf(name), o.at(name), "must be a list, got a mapping")
		return nil, false
	default:
		return []ast.Node{v}, true
	}
}

// strings returns the named field as a list of strings.
func (d *decoder) strings(o *object, name string) ([]string, bool) {
	nodes, ok := d.list(o, name)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(nodes))
	for i, n := range nodes {
		s, ok2 := d.scalar(n, fmt.Sprintf("%s[%d]", o.at(name), i))
		ok = ok && ok2
		out = append(out, s)
	}
	return out, ok
}

// header is one entry of a header map, with its line for template problems.
type header struct {
	Name, Value string
	line        int
	tmpl        *tmpl
}

// mapping returns the named field as a mapping (one entry written inline is one too); what
// names its entries in the error when it is something else.
func (d *decoder) mapping(o *object, name, what string) (*ast.MappingNode, bool) {
	if !o.has(name) {
		return nil, false
	}
	m, ok := o.fields[name].val.(*ast.MappingNode)
	if mv, single := o.fields[name].val.(*ast.MappingValueNode); single {
		m, ok = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}, true
	}
	if !ok {
		d.ps.add(o.lineOf(name), o.at(name), "must be a mapping of %s, got %s", what, kindOf(o.fields[name].val))
	}
	return m, ok
}

// headers returns the named field as an ordered list of HTTP header name/value pairs.
func (d *decoder) headers(o *object, name string) []header {
	m, ok := d.mapping(o, name, "header names to values")
	if !ok {
		return nil
	}
	var out []header
	seen := map[string]int{}
	entries, local := d.mappingEntries(m, o.at(name), 0)
	for i, mv := range entries {
		key := mv.Key.GetToken().Value
		path := o.at(name) + "." + key
		kl := lineOf(mv.Key)
		if !validHeaderName(key) {
			d.ps.add(kl, path, "%q is not a valid HTTP header name", key)
			continue
		}
		canon := strings.ToLower(key)
		if first, dup := seen[canon]; dup {
			if i < local {
				d.ps.add(kl, path, "duplicate header (first set on line %d)", first)
			}
			continue
		}
		seen[canon] = kl
		v, ok := d.scalar(mv.Value, path)
		if ok && strings.ContainsAny(v, "\r\n") {
			d.ps.add(kl, path, "header value must be on one line")
			continue
		}
		out = append(out, header{Name: key, Value: v, line: lineOf(d.resolve(mv.Value))})
	}
	return out
}
