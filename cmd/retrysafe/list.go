package main

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newListCmd) }

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every property with what the target MUST do, its labels and the fields it needs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for i, p := range framework.Properties() {
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "%s\n", p.Name)
				fmt.Fprintf(w, "  MUST:    %s\n", wrap(p.MustText(), 80, "           "))
				fmt.Fprintf(w, "  labels:  %s\n", strings.Join(p.AllLabels(), ", "))
				fmt.Fprintf(w, "  needs:   %s\n", strings.Join(p.Needs, "; "))
				fmt.Fprintf(w, "  catches: %s\n", strings.Join(p.Catches, ", "))
				covers := p.Covers
				switch {
				case covers != "":
				case p.IsConsumer():
					covers = "each declared consumer on " + p.TransportList()
				default:
					covers = "each declared operation"
				}
				fmt.Fprintf(w, "  covers:  %s\n", wrap(covers, 80, "           "))
			}
			return nil
		},
	}
}

// wrap folds text at width, indenting continuation lines.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
