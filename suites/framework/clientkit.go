package framework

import (
	"context"
	"errors"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets"
)

// The client side's plumbing: what a client driven in-process is given, and how the harness
// reaches the processes of the clients it starts. The scripted API and the scenarios are the
// client side's own (suites/client).

// ClientRun is what a client under test is given for one run of a scenario: the scripted API
// to call, a state directory that survives a restart within the scenario, the operations to
// perform, in order, and the configuration the scenario runs it in (its name, environment and
// retry policy), so that a client driven in-process can configure itself.
type ClientRun struct {
	// BaseURL is the scripted API (http://127.0.0.1:PORT, or https:// for a client that
	// declares https).
	BaseURL string
	// CAFile is the PEM file of the CA that signed the API's certificate (https only).
	CAFile string
	// StateDir survives a restart of the client within one scenario.
	StateDir string
	// Ops are the operations to perform, one after another: every operation the scenario asks
	// for, the second one with the first one's reference included.
	Ops []ClientOp
	// Env are the environment values the scenario sets, rendered over its values: the client's
	// env, the configuration's merged over it, and the client's ops.same_ref.env when the scenario
	// asks for a second operation with the first one's reference.
	Env map[string]string
	// Configuration names the configuration the scenario runs the client in
	// (clients[].configurations[].name; "" for the client's own).
	Configuration string
	// Policy is the retry policy the client declares in that configuration.
	Policy targets.RetryPolicy
	// Restart is true when the harness starts the client again after killing it
	// (restart-reuses-key) or once it stopped with an operation pending (uncertain-stays-pending),
	// as {{.Restart}} is 1 in a command's templates.
	Restart bool
}

// ClientOp is one operation a client is asked to perform: its business reference and the
// parameters the target file declares for it (an entry of {{.OpsFile}}).
type ClientOp struct {
	Ref    string         `json:"ref"`
	Params map[string]any `json:"params,omitempty"`
}

// ClientFunc performs a run's operations in-process (suites.RunClientT's fn); an error reports
// that an operation failed, one that wraps ErrPending that an operation's outcome is unknown.
type ClientFunc func(ctx context.Context, run ClientRun) error

// ErrPending is what a ClientFunc returns, wrapped, to report an operation pending: every attempt
// ended without an answer, so it cannot know whether the API acted, and it keeps the operation
// to resume it with its key (clients[].outcome.pending; uncertain-stays-pending).
var ErrPending = errors.New("an operation is pending: whether the API acted is unknown")

// InProcessClient is a client under test that is a Go function, not a command.
type InProcessClient struct {
	// Run performs one run's operations.
	Run ClientFunc
	// Exec returns the command (and extra environment) that performs one run as a process of
	// its own, for the scenario that kills and restarts the client; nil when it cannot be
	// (NoExec says why).
	Exec   func(run ClientRun) (argv, env []string, err error)
	NoExec string
}

// WithInProcessClient drives the target file's clients that declare no command through c.
func WithInProcessClient(c *InProcessClient) Option { return func(o *options) { o.inProcess = c } }

// Processes are the processes the harness started and reaps at its end: a client side's
// scenario starts its client's through them. An Env made without a harness (a test's) has its
// own, stopped by Close.
func (e *Env) Processes() *faults.Processes {
	e.procsOnce.Do(func() {
		if e.procs == nil {
			e.procs, e.ownProcs = &faults.Processes{}, true
		}
	})
	return e.procs
}
