package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// Reformat returns the same content as body with a different byte layout, to check that a target
// does not take reordering for a different payload: JSON gets the members of every object in reverse
// order, two-space indentation and a space after each colon; a form body gets its fields in reverse
// order (a single field gets its first letter percent-encoded instead). The result always differs
// from body byte-wise and is semantically equal to it.
func Reformat(body []byte, format BodyFormat) ([]byte, error) {
	switch format {
	case BodyJSON, "":
		v, err := decodeOrdered(body)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		writeReversed(&b, v, "")
		b.WriteByte('\n')
		out := b.Bytes()
		if bytes.Equal(out, body) {
			out = append([]byte(" "), out...)
		}
		return out, nil
	case BodyForm:
		return reformatForm(body)
	}
	return nil, fmt.Errorf("unknown body format %q (known: json, form)", format)
}

// jsonMember is one member of a JSON object, in document order.
type jsonMember struct {
	key string
	val any
}

// jsonObject keeps the member order that map[string]any loses.
type jsonObject []jsonMember

// decodeOrdered decodes one JSON value keeping object member order and exact numbers.
func decodeOrdered(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("body is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("body is not valid JSON: data after the first value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > 1000 {
		return nil, errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		obj := jsonObject{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonMember{key, v})
		}
		_, err := dec.Token()
		return obj, err
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// writeReversed writes v indented, with object members in reverse order.
func writeReversed(b *bytes.Buffer, v any, indent string) {
	inner := indent + "  "
	switch v := v.(type) {
	case jsonObject:
		if len(v) == 0 {
			b.WriteString("{ }")
			return
		}
		b.WriteString("{\n")
		for i := len(v) - 1; i >= 0; i-- {
			b.WriteString(inner)
			writeString(b, v[i].key)
			b.WriteString(": ")
			writeReversed(b, v[i].val, inner)
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[ ]")
			return
		}
		b.WriteString("[\n")
		for i, e := range v {
			b.WriteString(inner)
			writeReversed(b, e, inner)
			if i < len(v)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		fmt.Fprint(b, v)
	case nil:
		b.WriteString("null")
	}
}

// reformatForm reverses the fields of a form body.
func reformatForm(body []byte) ([]byte, error) {
	s := strings.TrimSpace(string(body))
	if _, err := url.ParseQuery(s); err != nil {
		return nil, fmt.Errorf("body is not a valid form: %w", err)
	}
	pairs := strings.Split(s, "&")
	slices.Reverse(pairs)
	out := strings.Join(pairs, "&")
	if out != string(body) {
		return []byte(out), nil
	}
	// One field (or a palindrome): percent-encode its first letter or digit instead.
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return []byte(fmt.Sprintf("%s%%%02X%s", out[:i], c, out[i+1:])), nil
		}
	}
	return nil, errors.New("form body has nothing that could be written differently")
}

// canonical returns a representation of body that is equal for equal content.
func canonical(body []byte, format BodyFormat) (string, error) {
	if format == BodyForm {
		v, err := url.ParseQuery(strings.TrimSpace(string(body)))
		if err != nil {
			return "", err
		}
		return v.Encode(), nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}
