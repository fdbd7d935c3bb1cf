package targets

import (
	"regexp"
	"strings"
	"testing"
)

// outcomeClient is a client whose outcome block %OUTCOME% each test fills in.
const outcomeClient = `clients:
  - name: c
%OUTCOME%
    operations:
      - {name: o, path: /x, identity: [$.ref]}
`

// parseOutcome parses outcomeClient with block.
func parseOutcome(block string) (*Target, []string) {
	return parseString(strings.Replace(outcomeClient, "%OUTCOME%", block, 1), nil)
}

// clients[].outcome decodes its three entries (failed also spelled failure:), each an exit code,
// a pattern or both.
func TestClientOutcomeDecodes(t *testing.T) {
	tg, probs := parseOutcome(`    failure: {exit_code: 1, output: "^failed "}
    outcome:
      ok: {exit_code: 0}
      pending: {exit_code: 4, output: "^pending "}`)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	o := tg.Clients[0].Outcome
	if *o.OK.ExitCode != 0 || o.OK.Output != nil || *o.Failed.ExitCode != 1 || !o.Failed.Output.MatchString("failed r-1: 503") ||
		*o.Pending.ExitCode != 4 || !o.Pending.Output.MatchString("pending r-1 key=k") {
		t.Errorf("outcome %+v: want ok exit 0, failed exit 1 or ^failed, pending exit 4 or ^pending", o)
	}
	tg, probs = parseOutcome(`    outcome:
      failed: {output: "^ERROR "}`)
	if probs != nil || !tg.Clients[0].Outcome.Failed.Output.MatchString("ERROR x") || tg.Clients[0].Outcome.Pending.Declared() {
		t.Errorf("outcome.failed alone: %v %+v, want failed ^ERROR and no pending", probs, tg)
	}
}

func TestClientOutcomeProblems(t *testing.T) {
	for _, c := range []struct {
		name, block string
		want        []string
	}{
		{"failed spelled twice", "    failure: {exit_code: 1}\n    outcome:\n      failed: {exit_code: 1}",
			[]string{"t.yaml:5: clients[0].outcome.failed: declared twice: failure: (line 3) is the failed entry's other spelling; keep one"}},
		{"a pending that says nothing", "    outcome:\n      pending: {}",
			[]string{"t.yaml:4: clients[0].outcome.pending: declare exit_code, output or both (how the client reports an operation whose outcome it cannot know)"}},
		{"an unknown entry", "    outcome:\n      unknown: {exit_code: 3}",
			[]string{"t.yaml:4: clients[0].outcome.unknown: unknown field"}},
		{"one exit code for pending and failed", "    failure: {exit_code: 1}\n    outcome:\n      pending: {exit_code: 1, output: \"^pending\"}",
			[]string{"t.yaml:5: clients[0].outcome.pending.exit_code: exit code 1 is also how the client reports failed"}},
		{"one exit code for ok and pending", "    outcome:\n      ok: {exit_code: 0}\n      pending: {exit_code: 0}",
			[]string{"t.yaml:5: clients[0].outcome.pending.exit_code: exit code 0 is also how the client reports ok"}},
		{"a bad pattern", "    outcome:\n      pending: {output: \"(\"}",
			[]string{"t.yaml:4: clients[0].outcome.pending.output: bad regular expression"}},
		{"an exit code out of range", "    outcome:\n      pending: {exit_code: 300}",
			[]string{"t.yaml:4: clients[0].outcome.pending.exit_code"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseOutcome(c.block)
			wantProblems(t, probs, c.want)
		})
	}
}

// Of reads pending first, then failed, then ok; a client that declares failed and no ok reports
// ok by anything else; one that declares neither cannot be told.
func TestClientOutcomeOf(t *testing.T) {
	exit := func(code int) ClientReport { return ClientReport{ExitCode: &code} }
	cli := ClientOutcome{Failed: exit(1), Pending: ClientReport{Output: regexp.MustCompile("^pending ")}}
	full := ClientOutcome{OK: exit(0), Failed: exit(1), Pending: exit(4)}
	for _, c := range []struct {
		name  string
		o     ClientOutcome
		exit  int
		lines []string
		want  Reported
	}{
		{"exit 1 with a pending line: pending", cli, 1, []string{"pending r-1 key=k"}, ReportedPending},
		{"exit 1: failed", cli, 1, nil, ReportedFailed},
		{"anything else, no ok declared: ok", cli, 0, []string{"ok r-1"}, ReportedOK},
		{"an undeclared exit code, ok declared: none", full, 2, nil, ReportedNone},
		{"exit 4: pending", full, 4, nil, ReportedPending},
		{"exit 0: ok", full, 0, nil, ReportedOK},
		{"nothing declared", ClientOutcome{}, 1, nil, ReportedUntold},
		{"only pending declared, not reported", ClientOutcome{Pending: exit(4)}, 0, nil, ReportedUntold},
		{"only pending declared, reported", ClientOutcome{Pending: exit(4)}, 4, nil, ReportedPending},
	} {
		if got := c.o.Of(c.exit, c.lines); got != c.want {
			t.Errorf("%s: Of(%d, %q) = %q, want %q", c.name, c.exit, c.lines, got, c.want)
		}
	}
}
