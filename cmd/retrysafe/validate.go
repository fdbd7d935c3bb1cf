package main

import (
	"fmt"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check target files; print every problem as FILE:LINE: field: message",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			bad := 0
			for _, f := range files {
				problems, warnings := targets.Validate(f)
				for _, p := range problems {
					fmt.Fprintln(cmd.ErrOrStderr(), p.String())
				}
				for _, w := range warnings {
					w.Message = "warning: " + w.Message
					fmt.Fprintln(cmd.ErrOrStderr(), w.String())
				}
				if len(problems) > 0 {
					bad++
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", f)
			}
			if bad > 0 {
				return &exitError{exitUsage, fmt.Errorf("%d of %d target files have problems", bad, len(files))}
			}
			return nil
		},
	}
}
