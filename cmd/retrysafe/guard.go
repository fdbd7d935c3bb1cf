package main

// The guard rails of `retrysafe run`: it sends duplicate POSTs, concurrent bursts and faults,
// so it only tests a machine other than this one when told to, and then gently.

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Caps of a remote run, for the flags the user did not set.
const (
	remoteMaxBurst    = 4
	remoteMaxRounds   = 5
	remoteMaxReplays  = 5
	remoteMaxLoadRate = 20 // hits per second of the load property

	// Hard caps for a remote target: what even an explicit flag cannot exceed.
	remoteHardBurst        = 32
	remoteHardRounds       = 50
	remoteHardReplays      = 20
	remoteHardLoadRate     = 100
	remoteHardLoadDuration = 60 * time.Second
)

// guardRemote refuses a target on another machine unless --allow-remote was given. remote
// are its instance URLs (redacted) whose host is not loopback (targets.Target.RemoteInstances;
// observers and cleanup requests go to the instances, so they are covered too). It runs
// before any request is sent.
func guardRemote(remote []string, allowRemote bool) error {
	if len(remote) == 0 || allowRemote {
		return nil
	}
	var host string
	if u, err := url.Parse(remote[0]); err == nil {
		host = u.Hostname()
	}
	return usageErr("refusing to test %s: host %q is not localhost or a loopback address (127.0.0.0/8, ::1), "+
		"and retrysafe sends duplicate POSTs, concurrent bursts and faults that can harm a real system; "+
		"pass --allow-remote if you mean it (decided from the URL alone, without a DNS lookup; nothing was sent)",
		strings.Join(remote, ", "), host)
}

// capRemote lowers burst, rounds, replays and the load property's rate to modest values for a remote target, unless the user set them, and says so.
func capRemote(cmd *cobra.Command, f *runFlags, remote []string, out io.Writer) {
	var capped []string
	limit := func(flag string, v *int, most int) {
		if !cmd.Flags().Changed(flag) && (*v <= 0 || *v > most) { // 0: the suites' default
			*v = most
			capped = append(capped, fmt.Sprintf("--%s %d", flag, most))
		}
	}
	limit("burst", &f.settings.RaceK, remoteMaxBurst)
	limit("rounds", &f.settings.RaceRounds, remoteMaxRounds)
	limit("replays", &f.settings.ReplayN, remoteMaxReplays)
	limit("load-rate", &f.settings.LoadRate, remoteMaxLoadRate)
	// --load-duration needs no modest default: its own (suites.DefaultLoadDuration) is one.
	if len(capped) > 0 {
		fmt.Fprintf(out, "retrysafe: remote target %s: modest defaults %s (set a flag to override it)\n",
			strings.Join(remote, ", "), strings.Join(capped, ", "))
	}
	hardCapRemote(f, remote, out)
}

// hardCapRemote clamps what a flag asked for against a remote target to the hard caps.
func hardCapRemote(f *runFlags, remote []string, out io.Writer) {
	var clamped []string
	clamp := func(flag string, v *int, most int) {
		if *v > most {
			*v = most
			clamped = append(clamped, fmt.Sprintf("--%s %d", flag, most))
		}
	}
	clamp("burst", &f.settings.RaceK, remoteHardBurst)
	clamp("rounds", &f.settings.RaceRounds, remoteHardRounds)
	clamp("replays", &f.settings.ReplayN, remoteHardReplays)
	clamp("load-rate", &f.settings.LoadRate, remoteHardLoadRate)
	if f.settings.LoadDuration > remoteHardLoadDuration {
		f.settings.LoadDuration = remoteHardLoadDuration
		clamped = append(clamped, fmt.Sprintf("--load-duration %v", remoteHardLoadDuration))
	}
	if len(clamped) > 0 {
		fmt.Fprintf(out, "retrysafe: remote target %s: hard caps %s (a remote target never gets more)\n",
			strings.Join(remote, ", "), strings.Join(clamped, ", "))
	}
}
