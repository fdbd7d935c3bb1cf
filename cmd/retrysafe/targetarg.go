package main

import (
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
)

// A command that tests a target file takes it as its argument or as --target: `retrysafe run
// t.yaml` is `retrysafe run --target t.yaml` (as `retrysafe validate t.yaml` has always been).

// targetFromArgs sets *target from the command's one positional argument, and refuses a second
// argument or a file given both ways.
func targetFromArgs(cmd *cobra.Command, target *string, args []string) error {
	switch {
	case len(args) == 0:
		return nil
	case len(args) > 1:
		return usageErr("%s takes one target file, got %d arguments: %s", cmd.CommandPath(), len(args), strings.Join(args, " "))
	case *target != "" && *target != args[0]:
		return usageErr("the target file is given twice (%s and --target %s): give it once", args[0], *target)
	}
	*target = args[0]
	return nil
}

// chainTransports are the values of run --chain.
var chainTransports = []string{string(targets.TransportAMQP), string(targets.TransportNATS), string(targets.TransportWebhook)}

// runArgs reads run's arguments: `--chain` takes its transport as its value (`--chain nats`,
// `--chain=nats`; bare `--chain` is amqp), so a transport right after a bare --chain is the
// chain's; any other argument is the target file.
func runArgs(cmd *cobra.Command, f *runFlags, args []string) error {
	if cmd.Flags().Changed("chain") {
		if len(args) == 1 && f.chain == chainDefault && slices.Contains(chainTransports, args[0]) {
			f.chain = args[0]
			return nil
		}
		if !slices.Contains(chainTransports, f.chain) {
			return usageErr("--chain: unknown transport %q (known: %s)", f.chain, strings.Join(chainTransports, ", "))
		}
		if len(args) > 0 {
			return usageErr("--chain tests the reference chain: it takes no target file (got %s; a chain target file runs as retrysafe run FILE)", strings.Join(args, " "))
		}
		return nil
	}
	return targetFromArgs(cmd, &f.target, args)
}

// chainDefault is the transport of a bare --chain.
const chainDefault = string(targets.TransportAMQP)
