package targets

import (
	"net/netip"
	"slices"
	"strings"
	"time"
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

// LoadLimits are what a target file declares its API takes from one retrysafe process under load
// (load_limits: {max_rate, max_duration}). With --allow-remote they replace the guard rails' hard
// caps of a remote run (100 hits/s for 60 s); a shard of a sharded load applies them per shard.
type LoadLimits struct {
	// MaxRate is the most hits per second one process may send.
	MaxRate int
	// MaxDuration is the longest one process may send load.
	MaxDuration time.Duration
}

// loadLimits decodes the optional load_limits block.
func (d *decoder) loadLimits(top *object) *LoadLimits {
	if !top.has("load_limits") {
		return nil
	}
	o, ok := d.child(top, "load_limits")
	if !ok {
		return nil
	}
	l := &LoadLimits{}
	if v, ok := d.integer(o, "max_rate", 1, 1_000_000); ok {
		l.MaxRate = v
	} else if !o.has("max_rate") {
		d.ps.add(o.line, "load_limits", "needs max_rate (hits per second)")
	}
	if v, ok := d.duration(o, "max_duration"); ok && v > 0 {
		l.MaxDuration = v
	} else if !o.has("max_duration") {
		d.ps.add(o.line, "load_limits", "needs max_duration (e.g. 10m)")
	} else if ok {
		d.ps.add(o.lineOf("max_duration"), o.at("max_duration"), "must be greater than zero")
	}
	return l
}
