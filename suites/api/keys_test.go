package api

import "testing"

func TestPadKey(t *testing.T) {
	if got := padKey("abc", 8, 'x'); got != "abc-xxxx" || len(got) != 8 {
		t.Errorf("padKey = %q", got)
	}
	if got := padKey("abcdefgh", 4, 'x'); got != "abcd" {
		t.Errorf("padKey cut = %q", got)
	}
}
