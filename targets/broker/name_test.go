package broker

import (
	"strings"
	"testing"
)

func TestUniqueName(t *testing.T) {
	a, b := UniqueName("replay"), UniqueName("replay")
	if a == b {
		t.Fatalf("two names are both %q", a)
	}
	for _, n := range []string{a, UniqueName("")} {
		if err := checkName(n); err != nil {
			t.Errorf("UniqueName made an unusable name: %v", err)
		}
		if !strings.HasPrefix(n, DefaultNamePrefix+"-") {
			t.Errorf("name %q does not start with %q", n, DefaultNamePrefix+"-")
		}
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"retrysafe-run-01_a", true},
		{"", false},
		{"a.b", false},
		{"a*", false},
		{"a>", false},
		{"a b", false},
		{"a/b", false},
		{strings.Repeat("a", maxNameLen), true},
		{strings.Repeat("a", maxNameLen+1), false},
	}
	for _, tt := range tests {
		err := checkName(tt.name)
		if got := err == nil; got != tt.ok {
			t.Errorf("checkName(%.30q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
