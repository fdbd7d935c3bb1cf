package main

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/spf13/cobra"
)

func newMutantsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mutants",
		Short: "List the reference API's mutants, one per line, name first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, m := range reference.Mutants {
				stores := strings.Join(m.Stores, ",")
				if len(m.Reported) > 0 {
					stores += " (reported: " + strings.Join(m.Reported, ",") + ")"
				}
				by := strings.Join(append([]string{m.CaughtBy}, m.AlsoCaughtBy...), ",")
				fmt.Fprintf(w, "%-21s caught by %-26s stores %-40s %s\n", m.Name, by, stores, m.Bug)
			}
			return nil
		},
	}
}
