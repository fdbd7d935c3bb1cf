package probe

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// DefaultRemoteInterval is the least time between two requests to a remote target: the probe's
// rate limit when --allow-remote lets it leave the machine.
const DefaultRemoteInterval = 200 * time.Millisecond

// IsLoopback reports whether a URL names this machine, judged from the URL alone (no DNS): the
// host is localhost or a literal loopback address (127.0.0.0/8, ::1).
func IsLoopback(u *url.URL) bool {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckLocal returns an error naming every instance of t that is not on this machine.
func CheckLocal(t *targets.Target) error {
	var remote []string
	for _, in := range t.Instances {
		if !IsLoopback(in.URL) {
			remote = append(remote, in.URL.Redacted())
		}
	}
	if len(remote) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to probe %s: not a loopback address (localhost, 127.0.0.0/8, ::1); pass --allow-remote to probe a remote API", strings.Join(remote, ", "))
}
