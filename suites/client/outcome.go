package client

import (
	"regexp"
	"slices"
	"sync"

	"github.com/retrysafe/retrysafe/targets"
)

// What a start of the client reported is read as the client declares it (clients[].outcome:
// targets.ClientOutcome.Of) over its exit status and the lines of its output that the declared
// patterns match, which reportLines keeps as they come.

// maxReportLines bounds the lines a start of the client keeps of its reports.
const maxReportLines = 1000

// reportLines keeps the lines of a client's output that report an outcome as it declares.
type reportLines struct {
	patterns []*regexp.Regexp
	mu       sync.Mutex
	lines    []string
}

// add keeps line when a pattern matches it.
func (l *reportLines) add(line string) {
	if !slices.ContainsFunc(l.patterns, func(re *regexp.Regexp) bool { return re.MatchString(line) }) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < maxReportLines {
		l.lines = append(l.lines, line)
	}
}

// all returns the lines kept.
func (l *reportLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// reportedWords says what a start of the client reported, for notes.
func reportedWords(r targets.Reported) string {
	if r == targets.ReportedUntold {
		return "what it reported cannot be told"
	}
	return "reporting " + string(r)
}
