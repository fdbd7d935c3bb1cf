package suites_test

import (
	"net/http/httptest"
	"testing"

	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// An API team runs the properties from its own `go test`: start (or point at) the API, then
// call suites.RunT with a target file that describes it.
func TestExampleRunT(t *testing.T) {
	api, err := reference.NewAPI(reference.Config{
		Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"},
		Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout,
		WorkDelay: reference.DefaultWorkDelay,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	t.Setenv("RETRYSAFE_URL", srv.URL)

	// The 24h retention is longer than a test waits: leave the expiry waits out.
	run := suites.RunT(t, "../targets/examples/reference.yaml", suites.Select("!wait:retention", ""))
	if len(run.Properties) < 6 {
		t.Fatalf("ran %d properties, want every property but expiry", len(run.Properties))
	}
}
