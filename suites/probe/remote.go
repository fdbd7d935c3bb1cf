package probe

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// DefaultRemoteInterval is the least time between two requests to a remote target: the probe's
// rate limit when --allow-remote lets it leave the machine.
const DefaultRemoteInterval = 200 * time.Millisecond

// CheckLocal returns an error naming every instance of t that is not on this machine, judged
// from the URL alone (no DNS; see targets.IsLoopbackHost).
func CheckLocal(t *targets.Target) error {
	remote := t.RemoteInstances()
	if len(remote) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to probe %s: not a loopback address (localhost, 127.0.0.0/8, ::1); pass --allow-remote to probe a remote API", strings.Join(remote, ", "))
}
