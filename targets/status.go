package targets

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// StatusSet is what a profile accepts for one kind of answer: status codes (422), a list of
// them ([400, 409, 422]), status classes (4xx), or, for a request without a key or with an empty
// one, "processed" (the request is processed normally, without idempotency). A target file
// writes it as a code, a list or a class; a list may mix codes and classes.
type StatusSet struct {
	// Codes are exact status codes.
	Codes []int
	// Classes are status classes by their first digit (4 for 4xx).
	Classes []int
	// Processed means the request is processed normally (missing_key_status, empty_key_status).
	Processed bool
}

// Status returns the set of one status code.
func Status(code int) StatusSet { return StatusSet{Codes: []int{code}} }

// Processed is the StatusSet "processed".
var Processed = StatusSet{Processed: true}

// Contains reports whether an answer with this status is in the set (never for "processed":
// a processed request's status is any 2xx, which callers check themselves).
func (s StatusSet) Contains(status int) bool {
	return slices.Contains(s.Codes, status) || slices.Contains(s.Classes, status/100)
}

// IsZero reports whether the set is empty (not declared).
func (s StatusSet) IsZero() bool { return len(s.Codes) == 0 && len(s.Classes) == 0 && !s.Processed }

// First returns the first code of the set, or the first class's x00 (400 for 4xx); 0 when it
// holds neither.
func (s StatusSet) First() int {
	if len(s.Codes) > 0 {
		return s.Codes[0]
	}
	if len(s.Classes) > 0 {
		return s.Classes[0] * 100
	}
	return 0
}

// String writes the set as a target file does: "422", "4xx", "[400, 409, 4xx]", "processed".
func (s StatusSet) String() string {
	if s.Processed {
		return "processed"
	}
	parts := make([]string, 0, len(s.Codes)+len(s.Classes))
	for _, c := range s.Codes {
		parts = append(parts, strconv.Itoa(c))
	}
	for _, c := range s.Classes {
		parts = append(parts, strconv.Itoa(c)+"xx")
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Words writes the set for a sentence: "422", "a 4xx", "one of 400, 409, 422".
func (s StatusSet) Words() string {
	switch {
	case s.Processed:
		return "the request to be processed (a 2xx)"
	case len(s.Codes)+len(s.Classes) == 1 && len(s.Classes) == 1:
		return "a " + s.String()
	case len(s.Codes)+len(s.Classes) == 1:
		return s.String()
	}
	return "one of " + strings.Trim(s.String(), "[]")
}

// parseElement adds one element to the set: a code from 100 to 599, a class such as 4xx, or (when
// allowed) "processed".
func (s *StatusSet) parseElement(v string, processed bool) error {
	v = strings.ToLower(strings.TrimSpace(v))
	switch {
	case v == "processed" && processed:
		s.Processed = true
		return nil
	case len(v) == 3 && strings.HasSuffix(v, "xx") && v[0] >= '1' && v[0] <= '5':
		if c := int(v[0] - '0'); !slices.Contains(s.Classes, c) {
			s.Classes = append(s.Classes, c)
		}
		return nil
	}
	code, err := strconv.Atoi(v)
	if err != nil || code < 100 || code > 599 {
		want := "a status code from 100 to 599 or a class such as 4xx"
		if processed {
			want += ", or processed"
		}
		return fmt.Errorf("must be %s, got %q", want, v)
	}
	if !slices.Contains(s.Codes, code) {
		s.Codes = append(s.Codes, code)
	}
	return nil
}

// statusSet decodes the named field as a StatusSet: a scalar or a list of scalars. processed
// allows the value "processed" (alone).
func (d *decoder) statusSet(o *object, name string, processed bool) (StatusSet, bool) {
	vals, ok := d.strings(o, name)
	if !ok {
		return StatusSet{}, false
	}
	var s StatusSet
	for i, v := range vals {
		at := o.at(name)
		if len(vals) > 1 {
			at = fmt.Sprintf("%s[%d]", at, i)
		}
		if err := s.parseElement(v, processed); err != nil {
			d.ps.add(o.lineOf(name), at, "%v", err)
			return StatusSet{}, false
		}
	}
	switch {
	case s.Processed && len(vals) > 1:
		d.ps.add(o.lineOf(name), o.at(name), "processed cannot be listed with status codes")
		return StatusSet{}, false
	case s.IsZero():
		d.ps.add(o.lineOf(name), o.at(name), "must name at least one status")
		return StatusSet{}, false
	}
	return s, true
}
