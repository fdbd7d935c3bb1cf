package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
)

// reexecMarker is the environment variable in which a re-executed test binary finds the run its
// client performs (RunClientT's restart scenario).
const reexecMarker = "RETRYSAFE_CLIENT_RUN"

// RunClientT runs the client properties against the target file's clients that declare no
// command, with fn as the client: each scenario calls fn(ctx, run) with the scripted API's URL,
// a state directory and the operations to perform, and fn returns an error when an operation
// failed (its way of reporting it). Each spec is a subtest (with a *testing.T); a failing or
// unknown verdict is a test error, as with RunT; the report tree is returned.
//
// restart-reuses-key must kill the client and start it again: RunClientT re-executes the test
// binary (-test.run with the test's name, and the run in the environment variable
// RETRYSAFE_CLIENT_RUN), where the same call to RunClientT runs fn once with that run and exits
// (1 when fn returned an error); the harness SIGKILLs it while an attempt is held and starts it
// again. fn reports an operation pending by returning an error that wraps framework.ErrPending
// (suites.ErrPending). Everything the test does before RunClientT runs again in the child; a test that restarts
// its client calls RunClientT once. With a T that is not a *testing.T (Ginkgo's GinkgoT()) the
// scenario skips, saying why. Select and the other options are RunT's; the client side is
// selected unless opts select otherwise.
func RunClientT(t framework.T, targetFile string, fn framework.ClientFunc, opts ...framework.Option) *reports.Run {
	t.Helper()
	if raw, ok := os.LookupEnv(reexecMarker); ok {
		os.Exit(runReexecuted(raw, fn))
	}
	ip := &framework.InProcessClient{Run: fn}
	named, ok := t.(interface{ Name() string })
	exe, err := os.Executable()
	switch {
	case !ok:
		ip.NoExec = fmt.Sprintf("RunClientT re-executes the test binary by test name, and %T has none", t)
	case err != nil:
		ip.NoExec = "the test binary cannot be found: " + err.Error()
	default:
		pattern := testPattern(named.Name())
		ip.Exec = func(run framework.ClientRun) ([]string, []string, error) {
			data, err := json.Marshal(run)
			return []string{exe, "-test.run=" + pattern, "-test.count=1"}, []string{reexecMarker + "=" + string(data)}, err
		}
	}
	opts = append([]framework.Option{framework.Select("side:client", "")}, opts...)
	return framework.RunT(t, targetFile, append(opts, framework.WithInProcessClient(ip))...)
}

// testPattern is the -test.run pattern that runs exactly the test (or subtest) named name.
func testPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// runReexecuted performs one run in a re-executed test binary and returns its exit status
// (targets.ExitCodes): 0, 1 when fn reported a failed operation, 4 a pending one (ErrPending), 2
// when the run cannot be read, 3 when interrupted.
func runReexecuted(raw string, fn framework.ClientFunc) int {
	var run framework.ClientRun
	if err := json.Unmarshal([]byte(raw), &run); err != nil {
		fmt.Fprintf(os.Stderr, "retrysafe: %s: %v\n", reexecMarker, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := fn(ctx, run)
	switch {
	case err == nil:
		return *targets.ExitCodes.OK.ExitCode
	case ctx.Err() != nil:
		fmt.Printf("failed: %v\n", err)
		return 3
	case errors.Is(err, framework.ErrPending):
		fmt.Printf("pending: %v\n", err)
		return *targets.ExitCodes.Pending.ExitCode
	}
	fmt.Printf("failed: %v\n", err)
	return *targets.ExitCodes.Failed.ExitCode
}
