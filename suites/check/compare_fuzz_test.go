package check

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/targets"
)

// fuzzIgnores are the ignore lists FuzzCompareBodies picks from (by a byte of its input),
// besides one built from a fuzzed path.
var fuzzIgnores = []string{"", "$.created", "$..id", "$.items[*].ts", "$[0]", "$.*", "$..*", "$['a']['b']", "$[?@.x]"}

// ignoreOf builds a profile's ignore list from JSONPath sources (those that do not parse
// are left out).
func ignoreOf(paths ...string) targets.Ignore {
	var quoted []string
	for _, p := range paths {
		if p != "" {
			quoted = append(quoted, "'"+strings.ReplaceAll(p, "'", "''")+"'")
		}
	}
	doc := "instances: [http://127.0.0.1:1]\noperations:\n  - {name: o, path: /o, body: '{}'}\nprofile:\n  base: ietf\n" +
		"  ignore:\n    json_paths: [" + strings.Join(quoted, ", ") + "]\n"
	tg, err := targets.Parse("t.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		return targets.Ignore{}
	}
	return tg.Profile.Ignore
}

// FuzzCompareBodies checks that comparing response bodies never panics, that a body equals
// itself under any ignore list, that comparison is symmetric, and that two JSON bodies
// found equal without ignored paths have the same canonical form.
func FuzzCompareBodies(f *testing.F) {
	for _, s := range [][2]string{
		{`{"id":"1","n":2}`, `{"n":2, "id":"1"}`}, {`{"id":"1"}`, `{"id":"2"}`}, {`{"a":null}`, `{}`},
		{`{"items":[{"ts":1,"v":1}]}`, `{"items":[{"ts":2,"v":1}]}`}, {`[1,2]`, `[1]`}, {`{"a":{}}`, `{"a":[]}`},
		{`{"a":1.0}`, `{"a":1}`}, {`abc`, `abc`}, {`{}`, `x`}, {`[[1]]`, `[]`}, {`[]`, `[{"x":1}]`},
		{`{"created":"2024-01-01","id":7}`, `{"created":"2025-01-01","id":7}`}, {`"\ud800"`, `"\ufffd"`}, {`1 2`, `1 2`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), byte(1), "$.id")
	}
	f.Fuzz(func(t *testing.T, a, b []byte, pick byte, path string) {
		ig := ignoreOf(fuzzIgnores[int(pick)%len(fuzzIgnores)], path)
		if d := CompareBodies(a, a, ig); len(d) != 0 {
			t.Fatalf("%q differs from itself at %v", a, d)
		}
		ab, ba := CompareBodies(a, b, ig), CompareBodies(b, a, ig)
		slices.Sort(ab)
		slices.Sort(ba)
		if !slices.Equal(ab, ba) {
			t.Fatalf("not symmetric: %q vs %q: %v, but %v the other way", a, b, ab, ba)
		}
		if len(CompareBodies(a, b, targets.Ignore{})) == 0 {
			ca, errA := canonical(a)
			cb, errB := canonical(b)
			if errA == nil && errB == nil && !bytes.Equal(ca, cb) {
				t.Fatalf("%q and %q are found equal but are different JSON (%s vs %s)", a, b, ca, cb)
			}
		}
	})
}

// canonical re-encodes one JSON document with sorted keys (numbers keep their text).
func canonical(b []byte) ([]byte, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
