package probe

import "time"

// DefaultRemoteInterval is the least time between two requests to a remote target: the probe's
// rate limit when Options.AllowRemote lets it leave the machine (the harness refuses a remote
// target otherwise, see suites.AllowRemote).
const DefaultRemoteInterval = 200 * time.Millisecond
