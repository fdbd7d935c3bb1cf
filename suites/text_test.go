package suites

import "testing"

func TestShellQuoteAndPadKey(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "^x$": "'^x$'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := padKey("abc", 8, 'x'); got != "abc-xxxx" || len(got) != 8 {
		t.Errorf("padKey = %q", got)
	}
	if got := padKey("abcdefgh", 4, 'x'); got != "abcd" {
		t.Errorf("padKey cut = %q", got)
	}
}
