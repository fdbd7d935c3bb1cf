package reference

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// sfString writes k as an RFC 8941 string ("..." with \" and \\ escaped); ok is false when k
// holds a character such a string cannot carry (anything outside printable ASCII).
func sfString(k string) (string, bool) {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < 0x20 || c > 0x7e {
			return "", false
		}
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String(), true
}

// FuzzParseKey checks that ParseKey never panics, that a key it accepts has 1 to 255
// characters, and that the RFC 8941 string form of an accepted key is the same key.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"abc", `"abc"`, "  abc\t", `"a\"b\\c"`, `"abc`, `"a\x"`, `"clé"`, "clé-é",
		`"abc", "def"`, `"abc";p=1`, "8e03978e-40d5-43e8-bc93-6894a57f9324", "", `""`, " ", "\xff\xfe",
		strings.Repeat("k", MaxKeyLength), strings.Repeat("k", MaxKeyLength+1), `"` + strings.Repeat("é", 10) + `"`,
		`"\"abc"`, "a\"b", `?1`, `:YWJj:`, `@1659578233`, `%"caf%c3%a9"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		key, err := ParseKey(value)
		if err != nil {
			if key != "" {
				t.Fatalf("ParseKey(%q) = %q with error %v", value, key, err)
			}
			return
		}
		if n := utf8.RuneCountInString(key); n < 1 || n > MaxKeyLength {
			t.Fatalf("ParseKey(%q) = %q: %d characters, want 1..%d", value, key, n, MaxKeyLength)
		}
		if quoted, ok := sfString(key); ok {
			again, err := ParseKey(quoted)
			if err != nil || again != key {
				t.Fatalf("ParseKey(%q) = %q, but its quoted form %s parses to %q, %v", value, key, quoted, again, err)
			}
		}
		if !strings.HasPrefix(key, `"`) && key == strings.TrimSpace(key) {
			if again, err := ParseKey(key); err != nil || again != key {
				t.Fatalf("the bare key %q parses to %q, %v", key, again, err)
			}
		}
	})
}

// FuzzCanonicalJSON checks that canonicalisation never panics, is idempotent, yields valid
// JSON, and that neither key order nor white space changes a fingerprint.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":2}`, " {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\":{} }\n",
		`{"z":{"y":1,"x":[{"d":1,"c":2}]},"a":null}`, `{"n":1.50,"e":1e3,"big":12345678901234567890123,"neg":-0}`,
		`{"s":"<&>\u2028\ud800"}`, `{"a":1,"a":2}`, `[]`, `"x"`, `1`, `null`, `{"a":1} x`, `{`, "\xff",
		`{"ref": "rs-1", "amount": 1000, "currency": "eur"}`, `{"é":"\u00e9","e\u0301":1}`} {
		f.Add([]byte(s), "a=1&b=2")
	}
	f.Fuzz(func(t *testing.T, body []byte, rawQuery string) {
		canon, err := CanonicalJSON(body)
		if err != nil {
			return
		}
		if !json.Valid(canon) {
			t.Fatalf("CanonicalJSON(%q) = %q: not valid JSON", body, canon)
		}
		again, err := CanonicalJSON(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", body, canon, again, err)
		}
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			q = url.Values{}
		}
		want, err := Fingerprint(q, body)
		if err != nil {
			t.Fatalf("Fingerprint fails on a body that canonicalises: %v", err)
		}
		for _, reordered := range reorderings(t, body) {
			got, err := Fingerprint(q, reordered)
			if err != nil || got != want {
				t.Fatalf("fingerprint of %q differs from that of its reordering %q (%v)", body, reordered, err)
			}
		}
	})
}

// reorderings re-encodes a JSON document with object keys in reverse order, and spread out
// with white space.
func reorderings(t *testing.T, body []byte) [][]byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("a body that canonicalises does not decode: %v", err)
	}
	var tight, loose bytes.Buffer
	writeReordered(&tight, v, "")
	writeReordered(&loose, v, "\n\t ")
	return [][]byte{tight.Bytes(), loose.Bytes()}
}

func writeReordered(b *bytes.Buffer, v any, space string) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		b.WriteString("{" + space)
		for i, k := range keys {
			if i > 0 {
				b.WriteString(space + "," + space)
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(space + ":" + space)
			writeReordered(b, v[k], space)
		}
		b.WriteString(space + "}")
	case []any:
		b.WriteString("[" + space)
		for i, e := range slices.Clone(v) {
			if i > 0 {
				b.WriteString(space + "," + space)
			}
			writeReordered(b, e, space)
		}
		b.WriteString(space + "]")
	case json.Number:
		b.WriteString(v.String())
	default:
		vb, _ := json.Marshal(v)
		b.Write(vb)
	}
}
