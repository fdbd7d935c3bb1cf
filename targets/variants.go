package targets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// FieldVariant is a request with one field changed: a leaf of the JSON body, a field of a form
// body, or a query parameter.
type FieldVariant struct {
	// Field names what changed: a JSONPath ($.amount, $.items[0].sku) for a body field,
	// "?name" for a query parameter.
	Field string
	// Body is the whole body with the field changed (nil: the body is unchanged).
	Body []byte
	// RawQuery is the whole query with the parameter changed ("" with Body set: unchanged).
	RawQuery string
}

// FieldVariants returns the variants of one rendered request: each leaf of its body (JSON or
// form) and each query parameter changed on its own, keeping its type (a number changed, a
// string's last letter or digit altered, a boolean flipped; array elements and nested objects
// included), in document order. The fields that carry the key (key.in: body or query) and those
// the operation lists in fingerprint_ignore are left out. At most max variants are returned;
// more reports that there were more.
func (op *Operation) FieldVariants(body []byte, rawQuery string, max int) (vs []FieldVariant, more bool, err error) {
	skip := func(path string) bool {
		return slices.ContainsFunc(op.FingerprintIgnore, func(ig string) bool { return within(path, ig) }) ||
			(op.Key.In == KeyInBody && path == "$"+memberPath(op.Key.Name))
	}
	add := func(v FieldVariant) bool {
		if len(vs) == max {
			more = true
			return false
		}
		vs = append(vs, v)
		return true
	}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
	case op.BodyFormat == BodyForm:
		skipForm := func(name string) bool {
			return slices.ContainsFunc(op.ignoreForm, func(ig string) bool { return formFieldWithin(name, ig) }) ||
				(op.Key.In == KeyInBody && name == op.Key.Name)
		}
		for _, v := range formVariants(string(body), skipForm) {
			if !add(v) {
				return vs, more, nil
			}
		}
	default:
		root, err := decodeOrdered(body)
		if err != nil {
			return nil, false, err
		}
		walkLeaves(root, "$", func(path string, leaf any, set func(any)) bool {
			if skip(path) {
				return true
			}
			set(changed(leaf))
			var b bytes.Buffer
			writeCompact(&b, root)
			set(leaf)
			return add(FieldVariant{Field: path, Body: b.Bytes()})
		})
	}
	for _, v := range queryVariants(rawQuery) {
		if slices.Contains(op.FingerprintIgnore, v.Field) || (op.Key.In == KeyInQuery && v.Field == "?"+op.Key.Name) {
			continue
		}
		if !add(v) {
			break
		}
	}
	return vs, more, nil
}

// within reports whether the leaf at path is the field ignored or inside it: $.meta covers
// $.meta.note and $.meta['a b'], $.items covers $.items[0].sku, but $.a does not cover $.ab.
func within(path, ignored string) bool {
	rest, ok := strings.CutPrefix(path, ignored)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// walkLeaves calls visit with the JSONPath, the value and a setter of every leaf of v (nulls
// have no type to keep and are left out), in document order, until visit returns false.
func walkLeaves(v any, path string, visit func(path string, leaf any, set func(any)) bool) bool {
	member := func(child any, at string, set func(any)) bool {
		switch child.(type) {
		case jsonObject, []any:
			return walkLeaves(child, at, visit)
		case nil:
			return true
		}
		return visit(at, child, set)
	}
	switch x := v.(type) {
	case jsonObject:
		for i := range x {
			if !member(x[i].val, path+memberPath(x[i].key), func(nv any) { x[i].val = nv }) {
				return false
			}
		}
	case []any:
		for i := range x {
			if !member(x[i], fmt.Sprintf("%s[%d]", path, i), func(nv any) { x[i] = nv }) {
				return false
			}
		}
	}
	return true
}

// changed returns another value of the same type: a number plus one (a fraction plus a half),
// a string with its last letter or digit altered, a boolean flipped.
func changed(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return json.Number(fmt.Sprint(i + 1))
		}
		if f, err := x.Float64(); err == nil {
			return json.Number(fmt.Sprint(f + 0.5))
		}
	case string:
		return alterString(x)
	case bool:
		return !x
	}
	return v
}

// alterString changes the last letter or digit of s to the next one of its kind (z to a, 9 to
// 0), so that a code keeps its length and alphabet; a string without one gets an "x" appended.
func alterString(s string) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+1)%26
			return string(b)
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+1)%26
			return string(b)
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
			return string(b)
		}
	}
	return s + "x"
}

// plainMember matches member names that a JSONPath writes as .name.
var plainMember = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// memberPath is the JSONPath segment of an object member: .name or ['na me'].
func memberPath(name string) string {
	if plainMember.MatchString(name) {
		return "." + name
	}
	return "['" + strings.ReplaceAll(strings.ReplaceAll(name, `\`, `\\`), `'`, `\'`) + "']"
}

// writeCompact writes v as compact JSON in document order.
func writeCompact(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case jsonObject:
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.key)
			b.WriteByte(':')
			writeCompact(b, m.val)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCompact(b, e)
		}
		b.WriteByte(']')
	default:
		writeReversed(b, v, "")
	}
}

// formVariants changes each field of a form body on its own (fields named $.name, or
// $['metadata[ref]']), but those skip leaves out by name.
func formVariants(body string, skip func(name string) bool) []FieldVariant {
	var out []FieldVariant
	for _, v := range pairVariants(strings.TrimSpace(body), func(name, changed string) FieldVariant {
		if skip(name) {
			return FieldVariant{}
		}
		return FieldVariant{Field: "$" + memberPath(name), Body: []byte(changed)}
	}) {
		if v.Field != "" {
			out = append(out, v)
		}
	}
	return out
}

// queryVariants changes each query parameter on its own (fields named ?name).
func queryVariants(rawQuery string) []FieldVariant {
	return pairVariants(rawQuery, func(name, changed string) FieldVariant {
		return FieldVariant{Field: "?" + name, RawQuery: changed}
	})
}

// pairVariants changes the value of each name=value pair of an &-separated list on its own
// (pairs that do not unescape, or have no name, are left out); variant makes the FieldVariant
// of the unescaped name and the whole list with that pair changed.
func pairVariants(list string, variant func(name, changed string) FieldVariant) []FieldVariant {
	pairs := strings.Split(list, "&")
	var out []FieldVariant
	for i, p := range pairs {
		name, val, _ := strings.Cut(p, "=")
		n, err1 := url.QueryUnescape(name)
		v, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil || n == "" {
			continue
		}
		changedPairs := slices.Clone(pairs)
		changedPairs[i] = name + "=" + url.QueryEscape(alterString(v))
		out = append(out, variant(n, strings.Join(changedPairs, "&")))
	}
	return out
}
