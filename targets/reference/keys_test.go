package reference

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	long := strings.Repeat("k", MaxKeyLength)
	for _, c := range []struct {
		name, in, want string // want "" = an error
	}{
		{"bare", "abc", "abc"},
		{"quoted", `"abc"`, "abc"},
		{"surrounding white space", "  abc\t", "abc"},
		{"quoted with white space", ` "abc" `, "abc"},
		{"UUID starting with a digit", "8e03978e-40d5-43e8-bc93-6894a57f9324", "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{"quoted UUID", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{"bare integer", "12345", "12345"},
		{"bare decimal", "1.5", "1.5"},
		{"bare token with colon", "a:b", "a:b"},
		{"bare base64", "Zm9v+/==", "Zm9v+/=="},
		{"bare with inner space", "a b", "a b"},
		{"bare with inner quote", `a"b`, `a"b`},
		{"bare non-ASCII", "clé-é", "clé-é"},
		{"quoted escapes", `"a\"b\\c"`, `a"b\c`},
		{"quoted separators", `"a,b;c=d"`, "a,b;c=d"},
		{"255 bare", long, long},
		{"255 quoted", `"` + long + `"`, long},
		{"255 characters of 2 bytes", strings.Repeat("é", MaxKeyLength), strings.Repeat("é", MaxKeyLength)},
		{"empty", "", ""},
		{"white space only", "   ", ""},
		{"empty quoted", `""`, ""},
		{"256 bare", long + "k", ""},
		{"256 quoted", `"` + long + `k"`, ""},
		{"256 characters of 2 bytes", strings.Repeat("é", MaxKeyLength+1), ""},
		{"unterminated", `"abc`, ""},
		{"bad escape", `"a\x"`, ""},
		{"non-ASCII in quotes", `"clé"`, ""},
		{"trailing data", `"abc" def`, ""},
		{"a list of two", `"abc", "def"`, ""},
	} {
		got, err := ParseKey(c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: ParseKey(%q) = %q, want an error", c.name, c.in, got)
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("%s: ParseKey(%q) = %q, %v; want %q", c.name, c.in, got, err, c.want)
		}
	}
}

func TestCanonicalJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{ // want "" = an error
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{" {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\":{} }\n", `{"a":[1,2],"b":{}}`},
		{`{"z":{"y":1,"x":[{"d":1,"c":2}]},"a":null}`, `{"a":null,"z":{"x":[{"c":2,"d":1}],"y":1}}`},
		{`{"n":1.50,"e":1e3,"big":12345678901234567890123,"neg":-0}`, `{"big":12345678901234567890123,"e":1e3,"n":1.50,"neg":-0}`},
		{`{"s":"<&>"}`, `{"s":"<&>"}`},
		{`{"s":"\u00e9\n\"q\""}`, `{"s":"é\n\"q\""}`},
		{`{"t":true,"f":false}`, `{"f":false,"t":true}`},
		{`[3,1,2]`, `[3,1,2]`},
		{`"str"`, `"str"`},
		{`42`, `42`},
		{`null`, `null`},
		{``, ``},
		{`{`, ``},
		{`{"a":1}{"b":2}`, ``},
		{`{"a":1} x`, ``},
		{`{'a':1}`, ``},
		{`{"a":01}`, ``},
	} {
		got, err := CanonicalJSON([]byte(c.in))
		switch {
		case c.want == "" && err == nil:
			t.Errorf("CanonicalJSON(%q) = %q, want an error", c.in, got)
		case c.want != "" && (err != nil || string(got) != c.want):
			t.Errorf("CanonicalJSON(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(query, body string) string {
		t.Helper()
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Fingerprint(q, []byte(body))
		if err != nil {
			t.Fatalf("Fingerprint(%q, %q): %v", query, body, err)
		}
		return f
	}
	base := fp("", `{"ref":"r","amount":1250,"currency":"EUR"}`)
	for _, c := range []struct {
		name, query, body string
		same              bool
	}{
		{"identical", "", `{"ref":"r","amount":1250,"currency":"EUR"}`, true},
		{"reordered keys", "", `{"currency":"EUR","amount":1250,"ref":"r"}`, true},
		{"white space", "", "{ \"ref\" : \"r\",\n\"amount\":1250, \"currency\":\"EUR\" }\n", true},
		{"escaped string", "", `{"ref":"\u0072","amount":1250,"currency":"EUR"}`, true},
		{"other amount", "", `{"ref":"r","amount":1251,"currency":"EUR"}`, false},
		{"amount as text", "", `{"ref":"r","amount":1250.0,"currency":"EUR"}`, false},
		{"other currency", "", `{"ref":"r","amount":1250,"currency":"USD"}`, false},
		{"extra field", "", `{"ref":"r","amount":1250,"currency":"EUR","x":1}`, false},
		{"a query", "dry=1", `{"ref":"r","amount":1250,"currency":"EUR"}`, false},
		{"an empty query value", "dry=", `{"ref":"r","amount":1250,"currency":"EUR"}`, false},
	} {
		if got := fp(c.query, c.body) == base; got != c.same {
			t.Errorf("%s: same fingerprint = %v, want %v", c.name, got, c.same)
		}
	}
	if fp("a=1&b=2", `{}`) != fp("b=2&a=1", `{}`) {
		t.Error("query parameter order changes the fingerprint")
	}
	if fp("a=1&a=2", `{}`) == fp("a=2&a=1", `{}`) {
		t.Error("the order of a repeated parameter's values does not change the fingerprint")
	}
	if _, err := Fingerprint(nil, []byte(`{"a":`)); err == nil {
		t.Error("Fingerprint of invalid JSON succeeded")
	}
	// The raw-fingerprint mutant hashes bytes: reordering changes it, identity does not.
	a := rawFingerprint("", []byte(`{"a":1,"b":2}`))
	if a != rawFingerprint("", []byte(`{"a":1,"b":2}`)) || a == rawFingerprint("", []byte(`{"b":2,"a":1}`)) {
		t.Error("rawFingerprint is not a hash of the raw bytes")
	}
}

func TestScopeAndDownstreamKeys(t *testing.T) {
	if scopeID("a", "bc") == scopeID("ab", "c") || scopeID("a|", "b") == scopeID("a", "|b") {
		t.Error("scopeID parts are ambiguous")
	}
	if s := scopeID("alice", "POST", "/v1/orders", "k"); len(s) != 64 || s != scopeID("alice", "POST", "/v1/orders", "k") {
		t.Errorf("scopeID = %q, want a stable 64-hex-digit id", s)
	}
	k := downstreamKey("alice", "orders", "k1")
	if !strings.HasPrefix(k, "rs_") || len(k) != 43 || k != downstreamKey("alice", "orders", "k1") {
		t.Errorf("downstreamKey = %q, want a stable rs_ + 40 hex digits", k)
	}
	for _, other := range []string{
		downstreamKey("bob", "orders", "k1"), downstreamKey("alice", "refunds", "k1"), downstreamKey("alice", "orders", "k2"),
	} {
		if other == k {
			t.Errorf("downstreamKey collides across operations: %q", k)
		}
	}
}
