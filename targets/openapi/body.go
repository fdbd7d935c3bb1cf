package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// refPlaceholder stands for {{.Ref}} while a body is encoded.
const refPlaceholder = "rs-ref-placeholder-5f3a9c"

// bodyPlan is an operation's request body as target-file templates.
type bodyPlan struct {
	format   string // "json" or "form"
	body     string // template, "" = no body
	variant  string // same ref, other content; "" = none found
	refField string // the field that carries {{.Ref}}; "" = none
	notes    []string
}

// planBody picks the request body's media type and a sample (the media type's example, else
// its first named example, else one generated from the schema), puts {{.Ref}} into a string
// field that looks like a reference (else the first string field), and varies another field
// for variant_body.
func planBody(rb *openapi3.RequestBodyRef) bodyPlan {
	var plan bodyPlan
	if rb == nil || rb.Value == nil || len(rb.Value.Content) == 0 {
		plan.notes = append(plan.notes, "The operation declares no request body")
		return plan
	}
	mediaType, mt := pickMedia(rb.Value.Content)
	if mt == nil {
		plan.notes = append(plan.notes, "No JSON or form media type among "+strings.Join(slices.Sorted(maps.Keys(rb.Value.Content)), ", ")+": write the body by hand")
		return plan
	}
	plan.format = "json"
	if mediaType == "application/x-www-form-urlencoded" {
		plan.format = "form"
	}
	sample, from := sampleOf(mt)
	obj, ok := sample.(map[string]any)
	if !ok {
		plan.body = escapeTemplate(mustJSON(sample))
		plan.notes = append(plan.notes, "The body ("+from+") is not an object: no field carries {{.Ref}}")
		return plan
	}
	plan.refField = refField(obj)
	if plan.refField == "" {
		plan.notes = append(plan.notes, "The body ("+from+") has no string field to carry {{.Ref}}")
	} else {
		obj[plan.refField] = refPlaceholder
	}
	plan.body = plan.render(obj)
	if v, field := vary(obj, plan.refField, schemaOf(mt)); v != nil {
		plan.variant = plan.render(v)
		plan.notes = append(plan.notes, fmt.Sprintf("Body from %s; variant_body changes %s", from, field))
	} else {
		plan.notes = append(plan.notes, "Body from "+from+"; no field to vary for variant_body (the mismatch check is skipped)")
	}
	return plan
}

// pickMedia prefers application/json, then any JSON type, then a form.
func pickMedia(c openapi3.Content) (string, *openapi3.MediaType) {
	names := slices.Sorted(maps.Keys(c))
	for _, want := range []func(string) bool{
		func(n string) bool { return n == "application/json" },
		func(n string) bool { return strings.HasSuffix(n, "+json") || strings.Contains(n, "/json") },
		func(n string) bool { return n == "application/x-www-form-urlencoded" },
	} {
		for _, n := range names {
			if want(n) && c[n] != nil {
				return n, c[n]
			}
		}
	}
	return "", nil
}

func schemaOf(mt *openapi3.MediaType) *openapi3.Schema {
	if mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

// sampleOf returns a sample value of a media type and says where it came from.
func sampleOf(mt *openapi3.MediaType) (any, string) {
	if mt.Example != nil {
		return clone(mt.Example), "the media type's example"
	}
	for _, name := range slices.Sorted(maps.Keys(mt.Examples)) {
		if ex := mt.Examples[name]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
			return clone(ex.Value.Value), "the example " + name
		}
	}
	if s := schemaOf(mt); s != nil && s.Example != nil {
		return clone(s.Example), "the schema's example"
	}
	return generate(mt.Schema, 0), "the schema"
}

// clone deep-copies a JSON-like value.
func clone(v any) any {
	var out any
	if err := json.Unmarshal([]byte(mustJSON(v)), &out); err != nil {
		return v
	}
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// refField returns the string field that carries {{.Ref}}: "ref" or "reference", else the first
// (by name) whose name mentions ref, else the first string field.
func refField(obj map[string]any) string {
	var first, refLike string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if _, isString := obj[k].(string); !isString {
			continue
		}
		l := strings.ToLower(k)
		if l == "ref" || l == "reference" {
			return k
		}
		if refLike == "" && strings.Contains(l, "ref") {
			refLike = k
		}
		if first == "" {
			first = k
		}
	}
	if refLike != "" {
		return refLike
	}
	return first
}

// vary returns a copy of obj with one field other than ref changed: the first number (doubled),
// else a string (another enum value, or a suffix), else a boolean (flipped).
func vary(obj map[string]any, ref string, s *openapi3.Schema) (map[string]any, string) {
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(obj)), func(k string) bool { return k == ref })
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	for _, k := range keys {
		if f, ok := obj[k].(float64); ok {
			out[k] = math.Max(f*2, f+1)
			return out, k
		}
	}
	for _, k := range keys {
		if str, ok := obj[k].(string); ok {
			out[k] = otherEnum(s, k, str)
			return out, k
		}
	}
	for _, k := range keys {
		if b, ok := obj[k].(bool); ok {
			out[k] = !b
			return out, k
		}
	}
	return nil, ""
}

// otherEnum returns another allowed value of a string property, or the value with a suffix.
func otherEnum(s *openapi3.Schema, name, value string) string {
	if s != nil && s.Properties[name] != nil && s.Properties[name].Value != nil {
		for _, e := range s.Properties[name].Value.Enum {
			if es, ok := e.(string); ok && es != value {
				return es
			}
		}
	}
	return value + "-variant"
}

// render encodes an object as the plan's format, {{.Ref}} in place of the placeholder.
func (plan bodyPlan) render(obj map[string]any) string {
	var parts []string
	if plan.format == "form" {
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			v := obj[k]
			if s, ok := v.(string); ok {
				parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(s))
			} else if _, nested := v.(map[string]any); !nested {
				parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(strings.Trim(mustJSON(v), `"`)))
			}
		}
		return strings.ReplaceAll(escapeTemplate(strings.Join(parts, "&")), refPlaceholder, "{{.Ref}}")
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		parts = append(parts, mustJSON(k)+": "+mustJSON(obj[k]))
	}
	return strings.ReplaceAll(escapeTemplate("{"+strings.Join(parts, ", ")+"}"), refPlaceholder, "{{.Ref}}")
}

// escapeTemplate keeps text/template from reading {{ in sample data.
func escapeTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}
