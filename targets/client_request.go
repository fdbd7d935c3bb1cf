package targets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/dunglas/httpsfv"
)

// What the scripted API reads of a client's request: its key, the logical operation it belongs
// to, its body in a canonical form; and what it answers a success with.

// KeyOf returns the idempotency key a request carries where the operation says (a quoted RFC
// 8941 string header is unquoted), and whether it carries one at all.
func (op *ClientOperation) KeyOf(req *http.Request, body []byte) (string, bool) {
	switch op.Key.In {
	case KeyInQuery:
		v, ok := req.URL.Query()[op.Key.Name]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	case KeyInBody:
		v, ok := bodyField(body, op.BodyFormat, op.Key.Name)
		return v, ok
	}
	vals := req.Header.Values(op.Key.Name)
	if len(vals) == 0 {
		return "", false
	}
	raw := strings.TrimSpace(vals[0])
	if strings.HasPrefix(raw, `"`) {
		if it, err := httpsfv.UnmarshalItem([]string{raw}); err == nil {
			if s, ok := it.Value.(string); ok {
				return s, true
			}
		}
	}
	return raw, true
}

// IdentityOf returns what names the logical operation of a request: its declared identity
// fields' values, joined with " | " (a field a request lacks counts as empty).
func (op *ClientOperation) IdentityOf(req *http.Request, body []byte) string {
	vals := make([]string, len(op.identity))
	for i, p := range op.identity {
		switch {
		case p.header != "":
			vals[i] = req.Header.Get(p.header)
		case p.query != "":
			vals[i] = req.URL.Query().Get(p.query)
		case op.BodyFormat == BodyForm:
			vals[i], _ = bodyField(body, BodyForm, p.form)
		default:
			vals[i] = jsonPathValue(body, p)
		}
	}
	return strings.Join(vals, " | ")
}

// FirstIdentityValue is the value of the operation's first identity field in a request, the
// {{.Ref}} of its success answer.
func (op *ClientOperation) FirstIdentityValue(req *http.Request, body []byte) string {
	id, _, _ := strings.Cut(op.IdentityOf(req, body), " | ")
	return id
}

// UnknownValue stands in an ExpectedIdentity for a value the harness cannot tell.
const UnknownValue = "?"

// ExpectedIdentity is the identity, as IdentityOf writes it, of the operation a scenario asks
// for with business reference ref and params: a field whose own name (its last member, header or
// parameter name) is a parameter's has that parameter's value; the first field, when no parameter
// names it, the reference (it is the {{.Ref}} of the success answer); any other UnknownValue.
func (op *ClientOperation) ExpectedIdentity(ref string, params map[string]any) string {
	vals := make([]string, len(op.identity))
	for i, p := range op.identity {
		v, ok := params[p.last]
		switch {
		case ok && p.last != "":
			b, err := json.Marshal(v)
			vals[i] = UnknownValue
			if err == nil {
				vals[i] = jsonText(b)
			}
		case i == 0:
			vals[i] = ref
		default:
			vals[i] = UnknownValue
		}
	}
	return strings.Join(vals, " | ")
}

// Canonical returns the request body in a form equal for equal content (JSON by value, a form
// by its sorted fields); a body that does not parse is its bytes.
func (op *ClientOperation) Canonical(body []byte) string {
	if s, err := canonical(body, op.BodyFormat); err == nil {
		return s
	}
	return string(body)
}

// Render returns the success answer's body and headers for one attempt.
func (r *ClientResponse) Render(v ResponseVars) ([]byte, http.Header, error) {
	body, err := r.body.render(v)
	if err != nil {
		return nil, nil, fmt.Errorf("response.body: %w", err)
	}
	h := http.Header{}
	for _, hd := range r.headers {
		val, err := hd.tmpl.render(v)
		if err != nil {
			return nil, nil, fmt.Errorf("response.headers.%s: %w", hd.Name, err)
		}
		h.Set(hd.Name, val)
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return []byte(body), h, nil
}

// bodyField returns a top-level field of a JSON object or a form body as text.
func bodyField(body []byte, format BodyFormat, name string) (string, bool) {
	if format == BodyForm {
		v, err := url.ParseQuery(string(body))
		if err != nil || !v.Has(name) {
			return "", false
		}
		return v.Get(name), true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return "", false
	}
	raw, ok := m[name]
	if !ok {
		return "", false
	}
	return jsonText(raw), true
}

// jsonPathValue is the text of what a JSONPath selects in a JSON body ("" when nothing).
func jsonPathValue(body []byte, p identityPart) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return ""
	}
	nodes := p.path.Select(doc)
	if len(nodes) == 0 {
		return ""
	}
	b, _ := json.Marshal(nodes[0])
	return jsonText(b)
}

// jsonText is a JSON value as text: a string unquoted, anything else as written.
func jsonText(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}
