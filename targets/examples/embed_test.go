package examples

import (
	"bytes"
	"testing"
)

// TestManagedMatchesReference: the managed target file describes the same API as
// reference.yaml (operations, tenants, profile, retention), only started by the harness; the
// part from shared_store up to its lifecycle must not drift from reference.yaml's.
func TestManagedMatchesReference(t *testing.T) {
	_, shared, ok := bytes.Cut(Reference, []byte("\nshared_store:"))
	if !ok {
		t.Fatal("reference.yaml has no shared_store")
	}
	_, managed, ok := bytes.Cut(ReferenceManaged, []byte("\nshared_store:"))
	if !ok {
		t.Fatal("reference-managed.yaml has no shared_store")
	}
	managed, _, ok = bytes.Cut(managed, []byte("\n# How the harness starts one instance."))
	if !ok {
		t.Fatal("reference-managed.yaml has no lifecycle comment")
	}
	if !bytes.Equal(bytes.TrimSpace(shared), bytes.TrimSpace(managed)) {
		t.Errorf("reference-managed.yaml no longer describes reference.yaml's API:\n--- reference.yaml\n%s\n--- reference-managed.yaml\n%s", shared, managed)
	}
}
