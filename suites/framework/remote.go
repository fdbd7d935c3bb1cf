package framework

// The guard rails of a run: it sends duplicate POSTs, concurrent bursts and faults, so it only
// tests a machine other than this one when told to, and then gently.

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// Modest settings of a remote run, for the settings left at their defaults (zero).
const (
	RemoteBurst    = 4
	RemoteRounds   = 5
	RemoteReplays  = 5
	RemoteLoadRate = 20 // hits per second of the load property
)

// Hard caps of a remote run: what even an explicit setting cannot exceed.
const (
	RemoteHardBurst        = 32
	RemoteHardRounds       = 50
	RemoteHardReplays      = 20
	RemoteHardLoadRate     = 100
	RemoteHardLoadDuration = 60 * time.Second
)

// remoteRefusal is the error of a remote target without AllowRemote; remote are its instance
// URLs (redacted) whose host is not loopback. Nothing was sent.
func remoteRefusal(remote []string) error {
	var host string
	if u, err := url.Parse(remote[0]); err == nil {
		host = u.Hostname()
	}
	return fmt.Errorf("%w: refusing to test %s: host %q is not localhost or a loopback address (127.0.0.0/8, ::1), "+
		"and retrysafe sends duplicate POSTs, concurrent bursts and faults that can harm a real system; "+
		"allow it (--allow-remote, suites.AllowRemote) if you mean it (decided from the URL alone, without a DNS lookup; nothing was sent)",
		ErrRemote, strings.Join(remote, ", "), host)
}

// capRemote gives the burst, rounds, replays and load rate left at their defaults modest values
// for a remote target, clamps every setting to the hard caps (the load's to the target file's
// load_limits where it declares them), says so on out, and returns the load limits in force in
// words.
func capRemote(s *Settings, remote []string, limits *targets.LoadLimits, out io.Writer) string {
	var modest, clamped []string
	limit := func(name string, v *int, most, hard int) {
		if *v <= 0 {
			*v = most
			modest = append(modest, fmt.Sprintf("--%s %d", name, most))
		} else if *v > hard {
			*v = hard
			clamped = append(clamped, fmt.Sprintf("--%s %d", name, hard))
		}
	}
	limit("burst", &s.RaceK, RemoteBurst, RemoteHardBurst)
	limit("rounds", &s.RaceRounds, RemoteRounds, RemoteHardRounds)
	limit("replays", &s.ReplayN, RemoteReplays, RemoteHardReplays)
	hardRate, hardDuration, whose := RemoteHardLoadRate, RemoteHardLoadDuration, "the guard rails' hard caps of a remote target"
	if limits != nil {
		hardRate, hardDuration, whose = limits.MaxRate, limits.MaxDuration, "the target file's load_limits"
	}
	limit("load-rate", &s.LoadRate, min(RemoteLoadRate, hardRate), hardRate)
	if s.LoadDuration > hardDuration {
		s.LoadDuration = hardDuration
		clamped = append(clamped, fmt.Sprintf("--load-duration %v", hardDuration))
	}
	who := strings.Join(remote, ", ")
	if len(modest) > 0 {
		fmt.Fprintf(out, "retrysafe: remote target %s: modest defaults %s (set a flag to override it)\n", who, strings.Join(modest, ", "))
	}
	if len(clamped) > 0 {
		fmt.Fprintf(out, "retrysafe: remote target %s: hard caps %s (a remote target never gets more)\n", who, strings.Join(clamped, ", "))
	}
	return fmt.Sprintf("at most %d hits/s for %v per process (%s)", hardRate, hardDuration, whose)
}

// LocalLimits are the load limits in force for a target on this machine, in words.
const LocalLimits = "none (a target on this machine)"
