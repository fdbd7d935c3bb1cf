package frameworktest

import (
	"net"
	"strings"
	"testing"
)

// FreeURLs returns n http:// URLs, comma-separated, on ports of 127.0.0.1 that were free a moment
// ago (for instances a test's target file names before their processes start).
func FreeURLs(t testing.TB, n int) string {
	t.Helper()
	var urls []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return strings.Join(urls, ",")
}
