package openapi

import (
	"math"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxDepth bounds the nesting of a generated sample.
const maxDepth = 6

// generate returns a sample value that satisfies the schema as far as a sample can: its example,
// default or first enum value when it has one, else a value of its type (objects with every
// property that is not read-only, one-element arrays, 1000 for numbers within their bounds,
// strings shaped by their format).
func generate(ref *openapi3.SchemaRef, depth int) any {
	if ref == nil || ref.Value == nil || depth > maxDepth {
		return nil
	}
	s := ref.Value
	switch {
	case s.Example != nil:
		return clone(s.Example)
	case s.Default != nil:
		return clone(s.Default)
	case len(s.Enum) > 0:
		return clone(s.Enum[0])
	case len(s.AllOf) > 0:
		merged := map[string]any{}
		for _, part := range s.AllOf {
			if obj, ok := generate(part, depth+1).(map[string]any); ok {
				for k, v := range obj {
					merged[k] = v
				}
			}
		}
		return merged
	case len(s.OneOf) > 0:
		return generate(s.OneOf[0], depth+1)
	case len(s.AnyOf) > 0:
		return generate(s.AnyOf[0], depth+1)
	}
	switch {
	case is(s, "object") || len(s.Properties) > 0:
		obj := map[string]any{}
		for name, p := range s.Properties {
			if p == nil || p.Value == nil || p.Value.ReadOnly {
				continue
			}
			if v := generate(p, depth+1); v != nil {
				obj[name] = v
			}
		}
		return obj
	case is(s, "array"):
		if item := generate(s.Items, depth+1); item != nil {
			return []any{item}
		}
		return []any{}
	case is(s, "integer"):
		return math.Round(number(s))
	case is(s, "number"):
		return number(s)
	case is(s, "boolean"):
		return true
	case is(s, "string"):
		return stringSample(s.Format)
	}
	return nil
}

// is reports whether the schema's type includes typ.
func is(s *openapi3.Schema, typ string) bool {
	return s.Type != nil && s.Type.Includes(typ)
}

// number is 1000 moved into the schema's bounds.
func number(s *openapi3.Schema) float64 {
	v := 1000.0
	if s.Max != nil && v > *s.Max {
		v = *s.Max
	}
	if s.Min != nil && v < *s.Min {
		v = *s.Min
	}
	return v
}

// stringSample is a string of the given format.
func stringSample(format string) string {
	switch format {
	case "date-time":
		return "2024-01-01T00:00:00Z"
	case "date":
		return "2024-01-01"
	case "email":
		return "user@example.com"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	case "uri", "url":
		return "https://example.com/"
	}
	return "example"
}
