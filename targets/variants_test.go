package targets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// variantOp parses minimal with the given operation lines and returns the operation.
func variantOp(t *testing.T, opYAML string) *Operation {
	t.Helper()
	tg, probs := parseString(minimal+opYAML, nil)
	if probs != nil {
		t.Fatalf("parse:\n%s", strings.Join(probs, "\n"))
	}
	return tg.Operations[0]
}

// flatLeaves lists every member and element of a JSON document in document order as
// "PATH=VALUE" (VALUE in compact JSON; objects and arrays as "{" and "["), so that two documents
// with the same members in the same order and the same values give the same list.
func flatLeaves(t *testing.T, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out []string
	var walk func(path string)
	walk = func(path string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		switch tok {
		case json.Delim('{'):
			out = append(out, path+"={")
			for dec.More() {
				k, _ := dec.Token()
				walk(path + testMemberPath(k.(string)))
			}
			_, _ = dec.Token()
		case json.Delim('['):
			out = append(out, path+"=[")
			for i := 0; dec.More(); i++ {
				walk(fmt.Sprintf("%s[%d]", path, i))
			}
			_, _ = dec.Token()
		default:
			b, _ := json.Marshal(tok)
			out = append(out, path+"="+string(b))
		}
	}
	walk("$")
	if dec.More() {
		t.Fatalf("%s: data after the document", doc)
	}
	return out
}

var testPlainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// testMemberPath writes a member name as a JSONPath segment, as FieldVariants names fields.
func testMemberPath(name string) string {
	if testPlainName.MatchString(name) {
		return "." + name
	}
	return "['" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(name) + "']"
}

// leafChange is one expected variant of a JSON body: the field and its new value (compact JSON).
type leafChange struct{ field, value string }

func TestFieldVariantsJSON(t *testing.T) {
	cases := []struct {
		name, op, body string
		want           []leafChange
	}{
		{"scalars", "",
			`{"ref": "r-1", "amount": 1000, "price": 9.5, "paid": true, "note": null, "code": "AZ9", "off": false}`,
			[]leafChange{{"$.ref", `"r-2"`}, {"$.amount", "1001"}, {"$.price", "10"}, {"$.paid", "false"}, {"$.code", `"AZ0"`}, {"$.off", "true"}}},
		{"nested objects and arrays",
			"",
			`{"customer": {"id": "c-7", "vip": false, "address": {"zip": "1000"}}, "items": [{"sku": "a1", "qty": 2}, {"sku": "zz", "qty": -1}], "tags": ["x", "y"], "empty": {}, "none": [], "nulls": [null]}`,
			[]leafChange{{"$.customer.id", `"c-8"`}, {"$.customer.vip", "true"}, {"$.customer.address.zip", `"1001"`},
				{"$.items[0].sku", `"a2"`}, {"$.items[0].qty", "3"}, {"$.items[1].sku", `"za"`}, {"$.items[1].qty", "0"},
				{"$.tags[0]", `"y"`}, {"$.tags[1]", `"z"`}}},
		{"member names that need brackets", "",
			`{"a b": 1, "it's": "q", "x.y": true, "_ok": 0, "1st": "Z", "back\\slash": 5}`,
			[]leafChange{{"$['a b']", "2"}, {`$['it\'s']`, `"r"`}, {"$['x.y']", "false"}, {"$._ok", "1"}, {"$['1st']", `"A"`}, {`$['back\\slash']`, "6"}}},
		{"strings without letters or digits", "",
			`{"sep": "--", "blank": "", "tail": "ab-", "accent": "café", "upper": "AZ"}`,
			[]leafChange{{"$.sep", `"--x"`}, {"$.blank", `"x"`}, {"$.tail", `"ac-"`}, {"$.accent", `"cagé"`}, {"$.upper", `"AA"`}}},
		{"numbers", "",
			`{"f": 1.25, "e": 1e3, "neg": -2, "zero": 0, "frac": -0.5, "big": 9007199254740993}`,
			[]leafChange{{"$.f", "1.75"}, {"$.e", "1000.5"}, {"$.neg", "-1"}, {"$.zero", "1"}, {"$.frac", "0"}, {"$.big", "9007199254740994"}}},
		{"array root", "", `[1, "a", [true]]`,
			[]leafChange{{"$[0]", "2"}, {"$[1]", `"b"`}, {"$[2][0]", "false"}}},
		{"scalar root has no fields", "", `42`, nil},
		{"the key field is left out when key.in is body",
			"    body: '{\"ref\": \"{{.Ref}}\"}'\n    key: {in: body, name: ClientToken}\n",
			`{"ref": "r-1", "ClientToken": "k-1", "nested": {"ClientToken": "n-1"}}`,
			[]leafChange{{"$.ref", `"r-2"`}, {"$.nested.ClientToken", `"n-2"`}}},
		{"a key field with brackets is left out", "    body: '{}'\n    key: {in: body, name: client token}\n",
			`{"client token": "k-1", "ref": "r"}`,
			[]leafChange{{"$.ref", `"s"`}}},
		{"a body field named like a header key is kept", "    key: {in: header, name: ClientToken}\n",
			`{"ClientToken": "k-1"}`,
			[]leafChange{{"$.ClientToken", `"k-2"`}}},
		{"fingerprint_ignore", "    fingerprint_ignore: [$.note, $.meta, '$.items[0].sku', '$[''a b'']']\n",
			`{"note": "n", "meta": {"x": "y", "deep": [1]}, "metadata": "m", "items": [{"sku": "s1", "qty": 1}, {"sku": "s2"}], "a b": 1, "a": 2}`,
			[]leafChange{{"$.metadata", `"n"`}, {"$.items[0].qty", "2"}, {"$.items[1].sku", `"s3"`}, {"$.a", "3"}}},
		{"fingerprint_ignore of a whole array", "    fingerprint_ignore: [$.items]\n",
			`{"items": [{"sku": "s1"}, 2], "items2": 1}`,
			[]leafChange{{"$.items2", "2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := variantOp(t, c.op)
			vs, more, err := op.FieldVariants([]byte(c.body), "", 100)
			if err != nil || more {
				t.Fatalf("FieldVariants: more %v, err %v", more, err)
			}
			var got, want []string
			for _, v := range vs {
				got = append(got, v.Field)
			}
			for _, w := range c.want {
				want = append(want, w.field)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("fields\n got: %v\nwant: %v", got, want)
			}
			original := flatLeaves(t, []byte(c.body))
			for i, v := range vs {
				if v.RawQuery != "" {
					t.Errorf("%s: RawQuery = %q, want \"\" (the query is unchanged)", v.Field, v.RawQuery)
				}
				wantLeaves := slices.Clone(original)
				at := slices.IndexFunc(wantLeaves, func(l string) bool { return strings.HasPrefix(l, c.want[i].field+"=") })
				if at < 0 {
					t.Fatalf("%s is not a member of %s", c.want[i].field, c.body)
				}
				wantLeaves[at] = c.want[i].field + "=" + c.want[i].value
				if gotLeaves := flatLeaves(t, v.Body); !slices.Equal(gotLeaves, wantLeaves) {
					t.Errorf("%s: variant %s\n got: %v\nwant: %v", v.Field, v.Body, gotLeaves, wantLeaves)
				}
			}
		})
	}
}

func TestFieldVariantsForm(t *testing.T) {
	cases := []struct {
		name, op, body string
		want           []FieldVariant
	}{
		{"every field", "    body_format: form\n", "ref=r-1&amount=1000&note=hello+world&empty=",
			[]FieldVariant{
				{Field: "$.ref", Body: []byte("ref=r-2&amount=1000&note=hello+world&empty=")},
				{Field: "$.amount", Body: []byte("ref=r-1&amount=1001&note=hello+world&empty=")},
				{Field: "$.note", Body: []byte("ref=r-1&amount=1000&note=hello+worle&empty=")},
				{Field: "$.empty", Body: []byte("ref=r-1&amount=1000&note=hello+world&empty=x")},
			}},
		{"escaped names", "    body_format: form\n", "first+name=Ann&card%5Bnumber%5D=4242",
			[]FieldVariant{
				{Field: "$['first name']", Body: []byte("first+name=Ano&card%5Bnumber%5D=4242")},
				{Field: "$['card[number]']", Body: []byte("first+name=Ann&card%5Bnumber%5D=4243")},
			}},
		{"the key field is left out", "    body_format: form\n    body: 'ref={{.Ref}}'\n    key: {in: body, name: token}\n", "ref=r-1&token=k-1",
			[]FieldVariant{{Field: "$.ref", Body: []byte("ref=r-2&token=k-1")}}},
		{"fingerprint_ignore", "    body_format: form\n    fingerprint_ignore: [$.note]\n", "note=n&ref=r",
			[]FieldVariant{{Field: "$.ref", Body: []byte("note=n&ref=s")}}},
		{"bracketed names ignored, either way named", "    body_format: form\n    fingerprint_ignore: [$.metadata.ref, \"$['card[number]']\"]\n",
			"metadata%5Bref%5D=r&card%5Bnumber%5D=4242&amount=1",
			[]FieldVariant{{Field: "$.amount", Body: []byte("metadata%5Bref%5D=r&card%5Bnumber%5D=4242&amount=2")}}},
		{"a parent ignores the fields nested in it", "    body_format: form\n    fingerprint_ignore: [$.metadata]\n",
			"metadata%5Bref%5D=r&metadata%5Ba%5D%5Bb%5D=n&metadatax=1",
			[]FieldVariant{{Field: "$.metadatax", Body: []byte("metadata%5Bref%5D=r&metadata%5Ba%5D%5Bb%5D=n&metadatax=2")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := variantOp(t, c.op)
			got, more, err := op.FieldVariants([]byte(c.body), "", 100)
			if err != nil || more {
				t.Fatalf("FieldVariants: more %v, err %v", more, err)
			}
			if !equalVariants(got, c.want) {
				t.Errorf("variants\n got: %s\nwant: %s", showVariants(got), showVariants(c.want))
			}
		})
	}
}

func TestFieldVariantsQuery(t *testing.T) {
	cases := []struct {
		name, op, body, query string
		want                  []FieldVariant
	}{
		{"every parameter", "", "", "dry=0&page=9&q=a%20b",
			[]FieldVariant{{Field: "?dry", RawQuery: "dry=1&page=9&q=a%20b"}, {Field: "?page", RawQuery: "dry=0&page=0&q=a%20b"},
				{Field: "?q", RawQuery: "dry=0&page=9&q=a+c"}}},
		{"after the body fields", "", `{"a": 1}`, "b=2",
			[]FieldVariant{{Field: "$.a", Body: []byte(`{"a":2}`)}, {Field: "?b", RawQuery: "b=3"}}},
		{"the key parameter is left out", "    key: {in: query, name: token}\n", "", "token=k-1&dry=0",
			[]FieldVariant{{Field: "?dry", RawQuery: "token=k-1&dry=1"}}},
		{"a parameter named like a body key is kept", "    body: '{}'\n    key: {in: body, name: token}\n", "", "token=t",
			[]FieldVariant{{Field: "?token", RawQuery: "token=u"}}},
		{"fingerprint_ignore", "    fingerprint_ignore: ['?dry', $.dry]\n", "", "dry=0&page=1",
			[]FieldVariant{{Field: "?page", RawQuery: "dry=0&page=2"}}},
		{"a body path does not ignore a parameter", "    fingerprint_ignore: [$.dry]\n", "", "dry=0",
			[]FieldVariant{{Field: "?dry", RawQuery: "dry=1"}}},
		{"no query", "", "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := variantOp(t, c.op)
			got, more, err := op.FieldVariants([]byte(c.body), c.query, 100)
			if err != nil || more {
				t.Fatalf("FieldVariants: more %v, err %v", more, err)
			}
			if !equalVariants(got, c.want) {
				t.Errorf("variants\n got: %s\nwant: %s", showVariants(got), showVariants(c.want))
			}
		})
	}
}

func TestFieldVariantsMax(t *testing.T) {
	body := `{"a": 1, "b": 2, "c": 3}`
	cases := []struct {
		query    string
		max      int
		want     []string
		wantMore bool
	}{
		{"", 2, []string{"$.a", "$.b"}, true},
		{"", 3, []string{"$.a", "$.b", "$.c"}, false},
		{"", 4, []string{"$.a", "$.b", "$.c"}, false},
		{"x=1&y=2", 4, []string{"$.a", "$.b", "$.c", "?x"}, true},
		{"x=1&y=2", 5, []string{"$.a", "$.b", "$.c", "?x", "?y"}, false},
		{"x=1", 1, []string{"$.a"}, true},
	}
	op := variantOp(t, "")
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.query, c.max), func(t *testing.T) {
			vs, more, err := op.FieldVariants([]byte(body), c.query, c.max)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, v.Field)
			}
			if !slices.Equal(got, c.want) || more != c.wantMore {
				t.Errorf("got %v, more %v; want %v, more %v", got, more, c.want, c.wantMore)
			}
		})
	}
}

func TestFieldVariantsErrors(t *testing.T) {
	for _, body := range []string{"not json", `{"a": 1} trailing`, `{"a": }`, `{"a": 1`} {
		t.Run(body, func(t *testing.T) {
			vs, _, err := variantOp(t, "").FieldVariants([]byte(body), "q=1", 10)
			if err == nil || !strings.Contains(err.Error(), "not valid JSON") || vs != nil {
				t.Errorf("FieldVariants(%q) = %v, %v; want a not-valid-JSON error", body, vs, err)
			}
		})
	}
	for _, body := range []string{"", "  \n"} {
		vs, more, err := variantOp(t, "").FieldVariants([]byte(body), "", 10)
		if err != nil || more || len(vs) != 0 {
			t.Errorf("FieldVariants(%q) = %v, %v, %v; want no variants and no error", body, vs, more, err)
		}
	}
}

func TestFingerprintIgnoreParse(t *testing.T) {
	cases := []struct {
		name, list string
		want       []string // FingerprintIgnore when the file is valid
		problems   []string // prefixes of every problem expected
	}{
		{"paths and parameters", "[$.note, ' $.items[0].sku ', \"?dry\", \"$['a b']\"]", []string{"$.note", "$.items[0].sku", "?dry", "$['a b']"}, nil},
		{"one path", "$.note", []string{"$.note"}, nil},
		{"not a path", "[note]", nil,
			[]string{`t.yaml:5: operations[0].fingerprint_ignore[0]: must be a JSONPath such as $.note or a query parameter such as ?dry, got "note"`}},
		{"a bare question mark", "['?']", nil,
			[]string{`t.yaml:5: operations[0].fingerprint_ignore[0]: must be a JSONPath such as $.note or a query parameter such as ?dry, got "?"`}},
		{"bad JSONPath", "[$.ok, '$..', $.fine]", nil,
			[]string{`t.yaml:5: operations[0].fingerprint_ignore[1]: bad JSONPath "$.."`}},
		{"several", "[a, $.ok, '$[', '?x', b]", nil,
			[]string{"t.yaml:5: operations[0].fingerprint_ignore[0]: must be a JSONPath", "t.yaml:5: operations[0].fingerprint_ignore[2]: bad JSONPath",
				"t.yaml:5: operations[0].fingerprint_ignore[4]: must be a JSONPath"}},
		{"a mapping", "{a: b}", nil, []string{"t.yaml:5: operations[0].fingerprint_ignore: must be a list, got a mapping"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, probs := parseString(minimal+"    fingerprint_ignore: "+c.list+"\n", nil)
			wantProblems(t, probs, c.problems)
			if tg != nil && !slices.Equal(tg.Operations[0].FingerprintIgnore, c.want) {
				t.Errorf("FingerprintIgnore = %q, want %q", tg.Operations[0].FingerprintIgnore, c.want)
			}
		})
	}
}

func equalVariants(a, b []FieldVariant) bool {
	return slices.EqualFunc(a, b, func(x, y FieldVariant) bool {
		return x.Field == y.Field && bytes.Equal(x.Body, y.Body) && (x.Body == nil) == (y.Body == nil) && x.RawQuery == y.RawQuery
	})
}

func showVariants(vs []FieldVariant) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s body=%q query=%q", v.Field, v.Body, v.RawQuery)
	}
	return b.String()
}
