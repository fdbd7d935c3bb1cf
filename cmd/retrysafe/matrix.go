package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports/matrix"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newMatrixCmd) }

func newMatrixCmd() *cobra.Command {
	var htmlFile string
	var labels []string
	cmd := &cobra.Command{
		Use:   "matrix [--label NAME=FILE]... FILE...",
		Short: "Compare targets side by side from their profiles and run reports",
		Long: `Print one table of several targets: a column per file (a behaviour profile written by
'retrysafe probe --out', or a run report.json written by 'retrysafe run'), a row per behaviour and
per property verdict. Cells marked ✗ are unsafe (a duplicate record, a response served across
tenants or operations, a stuck key, a 5xx to a race loser, another request's response replayed);
cells marked ≠ merely differ from the most common value of their row (a status, header or policy).

A column is named by the first instance URL of its target (profiles and run reports list the
instances); --label NAME=FILE names FILE's column NAME instead (repeatable; a FILE not among the
arguments is added as a column). Columns whose names repeat are told apart by their file names.

The table is printed in Markdown; --html also writes it as an HTML page.

Exit codes: 0 the table was written (whatever it shows); 2 a file could not be read, or a
--label is malformed.`,
		RunE: func(cmd *cobra.Command, files []string) error {
			cols, err := matrixColumns(files, labels)
			if err != nil {
				return err
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
	cmd.Flags().StringArrayVar(&labels, "label", nil, "name a column: NAME=FILE (repeatable; default: the target's first instance URL)")
	return cmd
}

// matrixColumns loads the files, then the labelled files not among them, and names the
// labelled columns.
func matrixColumns(files, labels []string) ([]matrix.Column, error) {
	named := map[string]string{} // file -> label
	var names []string
	for _, l := range labels {
		name, file, ok := strings.Cut(l, "=")
		name, file = strings.TrimSpace(name), strings.TrimSpace(file)
		switch {
		case !ok || name == "" || file == "":
			return nil, usageErr("--label %q: want NAME=FILE, e.g. --label stripe=stripe.json", l)
		case slices.Contains(names, name):
			return nil, usageErr("--label %q: the name %q is given twice", l, name)
		case named[filepath.Clean(file)] != "":
			return nil, usageErr("--label %q: %s is already labelled %q", l, file, named[filepath.Clean(file)])
		}
		names = append(names, name)
		named[filepath.Clean(file)] = name
		if !slices.ContainsFunc(files, func(f string) bool { return filepath.Clean(f) == filepath.Clean(file) }) {
			files = append(files, file)
		}
	}
	if len(files) == 0 {
		return nil, usageErr("no file: give profiles or run reports, e.g. retrysafe matrix a.json b.json")
	}
	cols := make([]matrix.Column, 0, len(files))
	for _, f := range files {
		c, err := matrix.Load(f)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if label := named[filepath.Clean(f)]; label != "" {
			c = c.WithLabel(label)
		}
		cols = append(cols, c)
	}
	return cols, nil
}
