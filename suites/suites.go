// Package suites is the entry point of retrysafe's conformance properties: importing it
// registers every side's (suites/api: the API's; suites/consumer: the event consumers';
// suites/client: the clients'; suites/chain: a client, an API and a consumer end to end), and it
// gives a program or a test what it needs to run them: RunT from a team's own `go test`, Open and
// OpenFile for a program that drives a run itself, and the options of both. What the sides run
// on is suites/framework; the checkers are suites/check.
package suites

import (
	"context"

	"github.com/retrysafe/retrysafe/reports"
	_ "github.com/retrysafe/retrysafe/suites/api"      // registers the API's properties
	_ "github.com/retrysafe/retrysafe/suites/chain"    // registers the chain's property
	"github.com/retrysafe/retrysafe/suites/client"     // registers the clients' properties; RunClientT
	_ "github.com/retrysafe/retrysafe/suites/consumer" // registers the consumers' properties
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// The framework's types a run is driven with.
type (
	// Harness owns one run against one target (see framework.Harness).
	Harness = framework.Harness
	// Settings are the knobs of a run.
	Settings = framework.Settings
	// Selection picks the specs a run runs.
	Selection = framework.Selection
	// Option configures a Harness and RunT.
	Option = framework.Option
	// Result is what a run produced: the report tree and its artefacts.
	Result = framework.Result
	// T is what RunT reports to: *testing.T, or Ginkgo's GinkgoT().
	T = framework.T
	// ClientRun is what a client driven by RunClientT is given for one scenario: the scripted
	// API's BaseURL, a StateDir that survives a restart, and the Ops to perform.
	ClientRun = framework.ClientRun
	// ClientOp is one operation a client is asked to perform: a business reference and the
	// parameters the target file declares.
	ClientOp = framework.ClientOp
	// ClientFunc performs a scenario's operations; an error reports a failed operation, one
	// that wraps ErrPending an operation whose outcome is unknown.
	ClientFunc = framework.ClientFunc
)

// ErrPending is what a ClientFunc returns, wrapped, to report an operation pending (its
// outcome unknown, kept to be resumed with its key): framework.ErrPending.
var ErrPending = framework.ErrPending

// RunClientT runs the client properties against the target file's clients that declare no
// command, fn being the client under test (suites/client.RunClientT): the harness plays the API,
// fails on purpose and judges fn's keys, bodies and delays.
func RunClientT(t T, targetFile string, fn ClientFunc, opts ...Option) *reports.Run {
	t.Helper()
	return client.RunClientT(t, targetFile, fn, opts...)
}

// RunT runs the selected properties of every side against the target a file describes, each
// spec a subtest, faults included, and returns the report tree (framework.RunT).
func RunT(t T, targetFile string, opts ...Option) *reports.Run {
	t.Helper()
	return framework.RunT(t, targetFile, opts...)
}

// Open prepares a run against a target (framework.Open).
func Open(ctx context.Context, t *targets.Target, opts ...Option) (*Harness, error) {
	return framework.Open(ctx, t, opts...)
}

// OpenFile loads a target file and opens a harness on it (framework.OpenFile).
func OpenFile(ctx context.Context, path string, opts ...Option) (*Harness, error) {
	return framework.OpenFile(ctx, path, opts...)
}

// The options of Open and RunT (see framework's).
var (
	WithSettings             = framework.WithSettings
	AllowRemote              = framework.AllowRemote
	WithLog                  = framework.WithLog
	WithProgress             = framework.WithProgress
	WithSink                 = framework.WithSink
	WithoutCleanup           = framework.WithoutCleanup
	WithoutReachabilityCheck = framework.WithoutReachabilityCheck
	WithoutBaseline          = framework.WithoutBaseline
	Select                   = framework.Select
)

// The errors of Open (see framework's).
var (
	ErrRemote     = framework.ErrRemote
	ErrNotStarted = framework.ErrNotStarted
)
