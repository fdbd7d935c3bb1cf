package targets

import (
	"regexp"
	"slices"
)

// ClientOutcome says how a client reports how an operation ended (clients[].outcome): ok,
// failed (a definite rejection or a final error; also spelled clients[].failure, its former and
// shorter name) and pending (unknown: every attempt ended without an answer, so the client
// cannot know whether the API acted, and keeps the operation to resume it with its key). Each
// entry is an exit code, a line of output matching a pattern, or either; pending is optional
// (without it, uncertain-stays-pending is skipped).
type ClientOutcome struct {
	OK, Failed, Pending ClientReport
}

// ClientReport is one way a client reports an outcome: an exit code, a line of its output
// matching a pattern, or either (whichever it does).
type ClientReport struct {
	// ExitCode is the exit status of a run that reports it (nil: not declared).
	ExitCode *int
	// Output matches the output line that reports it (nil: not declared).
	Output *regexp.Regexp
}

// Declared reports whether the entry says anything.
func (r ClientReport) Declared() bool { return r.ExitCode != nil || r.Output != nil }

// matches reports whether a run that exited with code exit and printed lines reports it.
func (r ClientReport) matches(exit int, lines []string) bool {
	if r.ExitCode != nil && exit == *r.ExitCode {
		return true
	}
	return r.Output != nil && slices.ContainsFunc(lines, r.Output.MatchString)
}

// Reported is what a client reported of how its operation ended (ClientOutcome.Of).
type Reported string

// What a client reported.
const (
	// ReportedOK: it reported the operation done.
	ReportedOK Reported = "ok"
	// ReportedFailed: it reported the operation failed.
	ReportedFailed Reported = "failed"
	// ReportedPending: it reported the operation's outcome unknown, kept to be resumed.
	ReportedPending Reported = "pending"
	// ReportedNone: it ended in a way none of its declared outcomes names (an exit code it does
	// not declare, and no line of its).
	ReportedNone Reported = "none"
	// ReportedUntold: it declares neither how it reports a failed operation nor a done one, and
	// did not report one pending: what it reported cannot be told.
	ReportedUntold Reported = ""
)

// Of reads what a client that exited with code exit and printed lines reported, its declared
// entries read in the order pending, failed, ok (so that a CLI that exits 1 on anything but
// success and prints a pending line reports pending). A client that declares a failed entry and
// no ok one reports ok by anything else it does (as with failure: alone); one that declares
// neither reports nothing that can be told (ReportedUntold) unless it reports pending.
func (o ClientOutcome) Of(exit int, lines []string) Reported {
	switch {
	case o.Pending.Declared() && o.Pending.matches(exit, lines):
		return ReportedPending
	case o.Failed.Declared() && o.Failed.matches(exit, lines):
		return ReportedFailed
	case o.OK.Declared() && o.OK.matches(exit, lines):
		return ReportedOK
	case o.OK.Declared():
		return ReportedNone
	case o.Failed.Declared():
		return ReportedOK
	}
	return ReportedUntold
}

// Patterns are the output patterns the entries declare: the lines a watcher of the client's
// output keeps for Of.
func (o ClientOutcome) Patterns() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, r := range []ClientReport{o.Pending, o.Failed, o.OK} {
		if r.Output != nil {
			out = append(out, r.Output)
		}
	}
	return out
}

// ExitCodes is how a client driven in-process reports, once re-executed as a process of its own
// (suites.RunClientT): exit 0 ok, 1 failed, 4 pending.
var ExitCodes = ClientOutcome{OK: exitReport(0), Failed: exitReport(1), Pending: exitReport(4)}

// exitReport is an entry declared by its exit code alone.
func exitReport(code int) ClientReport { return ClientReport{ExitCode: &code} }

// clientOutcome decodes how a client reports each outcome: clients[].outcome, and
// clients[].failure as the spelling of its failed entry (not both).
func (d *decoder) clientOutcome(o *object) ClientOutcome {
	var out ClientOutcome
	if o.has("failure") {
		out.Failed = d.clientReport(o, "failure", "a failed operation")
	}
	if !o.has("outcome") {
		return out
	}
	oo, ok := d.child(o, "outcome")
	if !ok {
		return out
	}
	if oo.has("ok") {
		out.OK = d.clientReport(oo, "ok", "a done operation")
	}
	if oo.has("failed") {
		if o.has("failure") {
			d.ps.add(oo.lineOf("failed"), oo.at("failed"), "declared twice: failure: (line %d) is the failed entry's other spelling; keep one", o.lineOf("failure"))
		} else {
			out.Failed = d.clientReport(oo, "failed", "a failed operation")
		}
	}
	if oo.has("pending") {
		out.Pending = d.clientReport(oo, "pending", "an operation whose outcome it cannot know")
	}
	d.distinctExitCodes(oo, out)
	return out
}

// clientReport decodes one entry: exit_code, output or both.
func (d *decoder) clientReport(o *object, name, what string) ClientReport {
	var r ClientReport
	fo, ok := d.child(o, name)
	if !ok {
		return r
	}
	if v, ok := d.integer(fo, "exit_code", 0, 255); ok {
		r.ExitCode = &v
	}
	if s, ok := d.str(fo, "output"); ok {
		re, err := regexp.Compile(s)
		if err != nil {
			d.ps.add(fo.lineOf("output"), fo.at("output"), "bad regular expression %q: %v", s, err)
		} else {
			r.Output = re
		}
	}
	if !fo.has("exit_code") && !fo.has("output") {
		d.ps.add(fo.line, o.at(name), "declare exit_code, output or both (how the client reports %s)", what)
	}
	return r
}

// distinctExitCodes refuses two outcomes with one exit code: a run that exits with it would
// report both, and the harness could not tell which. The problem is told at the later entry
// of the block (the other one, when the failed entry is spelled failure: outside it).
func (d *decoder) distinctExitCodes(oo *object, out ClientOutcome) {
	entries := []struct {
		name string
		r    ClientReport
	}{{"ok", out.OK}, {"failed", out.Failed}, {"pending", out.Pending}}
	for i, a := range entries {
		for _, b := range entries[i+1:] {
			if a.r.ExitCode == nil || b.r.ExitCode == nil || *a.r.ExitCode != *b.r.ExitCode {
				continue
			}
			at, with := b.name, a.name
			if !oo.has(b.name) {
				at, with = a.name, b.name
			}
			d.ps.add(oo.lineOf(at), oo.at(at)+".exit_code", "exit code %d is also how the client reports %s: give each outcome its own exit code, or tell them apart by output alone",
				*b.r.ExitCode, with)
		}
	}
}
