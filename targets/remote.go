package targets

import (
	"net/netip"
	"slices"
	"strings"
)

// IsLoopbackHost reports whether host (a URL's Hostname) is `localhost` or a literal loopback
// address (127.0.0.0/8, ::1, also IPv4-mapped). It never looks a name up: a name that might
// resolve to 127.0.0.1 is still remote, because DNS can change between the check and a send.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}

// RemoteInstances returns the target's instance URLs (redacted, each once) whose host is not
// loopback (see IsLoopbackHost). Observers and cleanup requests go to the instances, so they
// are covered too.
func (t *Target) RemoteInstances() []string {
	var out []string
	for _, in := range t.Instances {
		if u := in.URL.Redacted(); !IsLoopbackHost(in.URL.Hostname()) && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}
