package targets

import (
	"slices"
	"strings"
	"testing"
)

// TestRegistryIsOneTree checks that every object of the registry of fields hangs from a field
// of its parent object, so that no entry is dead or misspelt: "operations[].key" needs a field
// key in "operations[]", which needs a field operations in ".".
func TestRegistryIsOneTree(t *testing.T) {
	for _, name := range registryKeys() {
		if name == "." || strings.HasPrefix(name, "(") {
			continue
		}
		parent, field := parentOf(name)
		if name == "chain" {
			parent = "(chain file)"
		}
		known, ok := registry[parent]
		if !ok {
			t.Errorf("registry: %s hangs from %s, which is not in the registry", name, parent)
			continue
		}
		if !slices.Contains(known, field) {
			t.Errorf("registry: %s is the field %s of %s, which does not accept it (%s)", name, field, parent, strings.Join(known, ", "))
		}
		if len(registry[name]) == 0 {
			t.Errorf("registry: %s accepts no field", name)
		}
	}
}

// parentOf splits an object's name into its parent object and the field that holds it:
// "operations[].key" → "operations[]", "key"; "clients[].errors.<status>" → "clients[]",
// "errors"; "operations[]" → ".", "operations".
func parentOf(name string) (parent, field string) {
	name = strings.TrimSuffix(name, ".<status>")
	name = strings.TrimSuffix(name, "[]")
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ".", name
	}
	return name[:i], name[i+1:]
}

func TestParentOf(t *testing.T) {
	for _, c := range []struct{ in, parent, field string }{
		{"tls", ".", "tls"},
		{"operations[]", ".", "operations"},
		{"operations[].key", "operations[]", "key"},
		{"clients[].errors.<status>", "clients[]", "errors"},
		{"clients[].retry.retries[].when", "clients[].retry.retries[]", "when"},
		{"chain.api", "chain", "api"},
	} {
		if p, f := parentOf(c.in); p != c.parent || f != c.field {
			t.Errorf("parentOf(%q) = %q, %q; want %q, %q", c.in, p, f, c.parent, c.field)
		}
	}
}

// TestUnknownFieldListsTheRegistry checks that the loader rejects a field its object's list
// does not hold, naming the known ones in the registry's order, with the nearest as a hint.
func TestUnknownFieldListsTheRegistry(t *testing.T) {
	src := "instances: [\"http://127.0.0.1:8080\"]\noperations:\n  - name: orders\n    path: /v1/orders\n    key: {in: header, fromat: uuid}\n"
	_, err := Parse("t.yaml", []byte(src), nil)
	want := "t.yaml:5: operations[0].key.fromat: unknown field (did you mean \"format\"?) (known: " + strings.Join(registry["operations[].key"], ", ") + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant a problem %q", err, want)
	}
}
