package reference

import "testing"

func TestMemoryStoreContract(t *testing.T) {
	runStoreContract(t, func(t *testing.T) Store {
		s := NewMemoryStore()
		t.Cleanup(func() { s.Close() })
		return s
	})
}
