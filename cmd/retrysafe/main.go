// Command retrysafe is a conformance test harness and fault injector for idempotent APIs.
//
// Exit codes: 0 every checked property holds; 1 at least one violation; 2 the run could not
// start (bad file or flags, unreachable target); 3 incomplete (interrupted, deadline, or a
// verdict left unknown) with no violation.
package main

import (
	"errors"
	"fmt"
	_ "github.com/retrysafe/retrysafe/suites" // every side's properties
	"os"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK         = 0
	exitViolation  = 1
	exitUsage      = 2
	exitIncomplete = 3
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr wraps an error as exit code 2.
func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "retrysafe",
		Short: "Conformance test harness and fault injector for idempotent APIs",
		Long: `retrysafe proves, by counting business records and not only by comparing responses,
that an API taking an Idempotency-Key leaves exactly one record per operation under
replays, concurrent races, mismatched payloads, expired keys, other tenants, crashes and
dropped responses. It ships a reference API with deliberately broken modes ("mutants").`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(suggestFlag) // every subcommand inherits it
	root.AddCommand(newServeCmd(), newMutantsCmd(), newValidateCmd())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	return root
}

// extraCommands are registered by the other files of this package.
var extraCommands []func() *cobra.Command

func main() {
	err := newRoot().Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "retrysafe:", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is the exit status for what the root command returned.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	}
	return exitUsage // flag and argument errors from cobra
}
