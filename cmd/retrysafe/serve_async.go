package main

import (
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/spf13/cobra"
)

// addAsyncFlags adds the reference API's asynchronous mode to serve: --async and --async-delay.
func addAsyncFlags(cmd *cobra.Command, cfg *reference.Config) {
	f := cmd.Flags()
	f.BoolVar(&cfg.Async, "async", false, "make every POST an asynchronous operation: the key and a pending job commit in the request's transaction, "+
		"the answer is 202 with Location: "+reference.OperationsPath+"/{id} (its replays carry the same), and a worker in this process, reading the "+
		"pending jobs from the store (so that it resumes them after a restart on sqlite or postgres), makes the record; GET "+
		reference.OperationsPath+"/{id} answers {\"id\", \"status\": pending|succeeded|failed, \"result\": the record}. Stores: memory, sqlite, postgres")
	f.DurationVar(&cfg.AsyncDelay, "async-delay", 0, "with --async: how long after its 202 an operation's job runs at the earliest")
}
