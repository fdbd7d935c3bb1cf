package frameworktest

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/faults/ports"
)

// ReservedURLs returns n http:// URLs, comma-separated, on ports of 127.0.0.1 reserved for the
// test until it ends (faults/ports): nothing else on the machine can take them, and a process the
// test's target starts with `serve --reuse-port` (RETRYSAFE_REUSE_PORT=true in the managed
// examples) listens on them, as often as it is restarted.
func ReservedURLs(t testing.TB, n int) string {
	t.Helper()
	r, err := ports.Reserve(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return strings.Join(r.URLs(), ",")
}
