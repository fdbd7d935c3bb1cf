package openapi

import (
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// observer is an HTTP observer that counts the records of one {{.Ref}}.
type observer struct {
	path, query, jsonpath string
}

// findObserver looks for a GET on the same path that filters by the ref field through a query
// parameter (the parameter named like the field, else one whose name mentions ref), and whose
// JSON answer has a count (a "count" number, an array member, or is an array).
func findObserver(path string, item *openapi3.PathItem, refField string) *observer {
	if refField == "" || item.Get == nil || strings.Contains(path, "{") {
		return nil
	}
	var param string
	for _, p := range parameters(item.Parameters, item.Get.Parameters) {
		if p.In != openapi3.ParameterInQuery {
			continue
		}
		if p.Name == refField {
			param = p.Name
			break
		}
		if param == "" && strings.Contains(strings.ToLower(p.Name), "ref") {
			param = p.Name
		}
	}
	if param == "" {
		return nil
	}
	jp := countPath(item.Get.Responses)
	if jp == "" {
		return nil
	}
	return &observer{path: path, query: param + "={{.Ref}}", jsonpath: jp}
}

// countPath returns the JSONPath of the count in the first 2xx JSON answer: $.count (or
// another integer member named like a count), $.NAME of an array member, or $ for an array.
func countPath(rs *openapi3.Responses) string {
	if rs == nil {
		return ""
	}
	for _, code := range rs.Keys() {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		r := rs.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		_, mt := pickMedia(r.Value.Content)
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			continue
		}
		s := mt.Schema.Value
		if is(s, "array") {
			return "$"
		}
		props := properties(s)
		for _, name := range []string{"count", "total", "total_count", "totalCount"} {
			if p := props[name]; p != nil && p.Value != nil && (is(p.Value, "integer") || is(p.Value, "number")) {
				return "$." + name
			}
		}
		for _, name := range append([]string{"items", "data", "results"}, slices.Sorted(maps.Keys(props))...) {
			if p := props[name]; p != nil && p.Value != nil && is(p.Value, "array") {
				return "$." + name
			}
		}
	}
	return ""
}

// properties returns an object schema's properties, those of its allOf parts included.
func properties(s *openapi3.Schema) openapi3.Schemas {
	out := openapi3.Schemas{}
	for _, part := range s.AllOf {
		if part != nil && part.Value != nil {
			for k, v := range properties(part.Value) {
				out[k] = v
			}
		}
	}
	for k, v := range s.Properties {
		out[k] = v
	}
	return out
}
