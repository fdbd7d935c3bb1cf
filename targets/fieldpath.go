package targets

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"
)

// How a target file names one field of a request body. A JSON body's field is a JSONPath that
// selects one value ($.ref, $.metadata.ref, $.items[0].sku, $['odd name']). A form body has no
// nesting of its own: Rack, PHP and Stripe encode nested parameters in the field's name
// (metadata[ref]=..., items[0][sku]=...). So in a form body $.metadata.ref names the field
// metadata[ref], and so does $['metadata[ref]'] (the field's name written as one member);
// $.items[0].sku names items[0][sku].

// fieldSeg is one segment of a path that names one field: a member name, or an array index.
type fieldSeg struct {
	name  string
	index int
	isIdx bool
}

// fieldSegments returns the segments of a JSONPath that names one field: each one name or one
// index, none a wildcard, a slice, a filter or a descendant segment, and at least one.
func fieldSegments(src string) ([]fieldSeg, error) {
	p, err := jsonpath.Parse(src)
	if err != nil {
		if strings.Contains(src, "[") && !strings.Contains(src, "'") && !strings.Contains(src, `"`) {
			return nil, fmt.Errorf("bad JSONPath %q: %v (a bracketed name is quoted: $['metadata[ref]'], or written as $.metadata.ref)", src, err)
		}
		return nil, fmt.Errorf("bad JSONPath %q: %v", src, err)
	}
	segs := p.Query().Segments()
	if len(segs) == 0 {
		return nil, fmt.Errorf("%q names the whole body, not a field (e.g. $.ref)", src)
	}
	out := make([]fieldSeg, 0, len(segs))
	for _, seg := range segs {
		sels := seg.Selectors()
		if seg.IsDescendant() || len(sels) != 1 {
			return nil, fmt.Errorf("%q can select several values; name one field (e.g. $.ref, $.metadata.ref)", src)
		}
		switch s := sels[0].(type) {
		case spec.Name:
			out = append(out, fieldSeg{name: string(s)})
		case spec.Index:
			if s < 0 {
				return nil, fmt.Errorf("%q counts from the end of an array; name one field by a non-negative index", src)
			}
			out = append(out, fieldSeg{index: int(s), isIdx: true})
		default:
			return nil, fmt.Errorf("%q can select several values; name one field (e.g. $.ref, $.metadata.ref)", src)
		}
	}
	return out, nil
}

// FormFieldName returns the name of the form field a JSONPath names: $.ref is ref,
// $.metadata.ref and $['metadata[ref]'] are metadata[ref], $.items[0].sku is items[0][sku].
// A path that cannot name one field is an error.
func FormFieldName(src string) (string, error) {
	segs, err := fieldSegments(src)
	if err != nil {
		return "", err
	}
	if segs[0].isIdx || segs[0].name == "" {
		return "", fmt.Errorf("%q does not start with a field name: a form body is a list of named fields", src)
	}
	var b strings.Builder
	b.WriteString(segs[0].name)
	for _, s := range segs[1:] {
		b.WriteString("[" + s.text() + "]")
	}
	return b.String(), nil
}

// text is the segment as a form name writes it between brackets.
func (s fieldSeg) text() string {
	if s.isIdx {
		return strconv.Itoa(s.index)
	}
	return s.name
}

// formFieldWithin reports whether form field name is the field ignored or nested in it:
// metadata covers metadata[ref] and metadata[a][b], but not metadatax.
func formFieldWithin(name, ignored string) bool {
	rest, ok := strings.CutPrefix(name, ignored)
	return ok && (rest == "" || rest[0] == '[')
}
