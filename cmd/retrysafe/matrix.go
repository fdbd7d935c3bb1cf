package main

import (
	"fmt"
	"os"

	"github.com/retrysafe/retrysafe/reports/matrix"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newMatrixCmd) }

func newMatrixCmd() *cobra.Command {
	var htmlFile string
	cmd := &cobra.Command{
		Use:   "matrix FILE...",
		Short: "Compare targets side by side from their profiles and run reports",
		Long: `Print one table of several targets: a column per file (a behaviour profile written by
'retrysafe probe --out', or a run report.json written by 'retrysafe run'), a row per behaviour and
per property verdict. Cells marked ✗ are unsafe (a duplicate record, a response served across
tenants or operations, a stuck key, a 5xx to a race loser, another request's response replayed);
cells marked ≠ merely differ from the most common value of their row (a status, header or policy).

The table is printed in Markdown; --html also writes it as an HTML page.

Exit codes: 0 the table was written (whatever it shows); 2 a file could not be read.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			cols := make([]matrix.Column, 0, len(files))
			for _, f := range files {
				c, err := matrix.Load(f)
				if err != nil {
					return usageErr("%v", err)
				}
				cols = append(cols, c)
			}
			table := matrix.Build(cols)
			table.WriteMarkdown(cmd.OutOrStdout())
			if htmlFile == "" {
				return nil
			}
			f, err := os.Create(htmlFile)
			if err != nil {
				return usageErr("--html: %v", err)
			}
			if err := table.WriteHTML(f); err != nil {
				f.Close()
				return usageErr("--html: %v", err)
			}
			if err := f.Close(); err != nil {
				return usageErr("--html: %v", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "matrix: %s\n", htmlFile)
			return nil
		},
	}
	cmd.Flags().StringVar(&htmlFile, "html", "", "also write the table as an HTML page to this file")
	return cmd
}
