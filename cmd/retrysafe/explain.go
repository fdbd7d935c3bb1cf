package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/retrysafe/retrysafe/targets/reference/client"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newExplainCmd) }

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain [KIND|PROPERTY]",
		Short: "Say what an anomaly kind or a property means, what usually causes it, and how to confirm it",
		Long: `Explain an anomaly kind (the words in a failure's "found:" line and the badges of
report.html, e.g. duplicate-record) or a property (a row of the properties table, e.g. race):
what it means, the common causes in real implementations, and how to confirm one by hand with
the reproduction a failure prints. Without an argument, list every kind and property.

Exit codes: 0 explained; 2 an unknown name (the nearest names are suggested).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if len(args) == 0 {
				listExplainable(w)
				return nil
			}
			name := strings.TrimSpace(args[0])
			e, isKind := reports.Explain(reports.Kind(name))
			p := findProperty(name)
			if !isKind && p == nil {
				near := nearest(name, explainable(), 5, false)
				return usageErr("explain: %q is neither an anomaly kind nor a property (nearest: %s; 'retrysafe explain' lists them all)",
					name, strings.Join(near, ", "))
			}
			if isKind {
				writeKind(w, e)
			}
			if p != nil {
				if isKind {
					fmt.Fprintln(w)
				}
				writeProperty(w, p)
			}
			return nil
		},
	}
}

// explainable are the names explain knows: every kind, then every property.
func explainable() []string {
	var names []string
	for _, k := range reports.Kinds {
		names = append(names, string(k))
	}
	for _, p := range framework.Properties() {
		names = append(names, p.Name)
	}
	return names
}

// findProperty returns the property named name, or nil.
func findProperty(name string) *framework.Property {
	ps := framework.Properties()
	if i := slices.IndexFunc(ps, func(p *framework.Property) bool { return p.Name == name }); i >= 0 {
		return ps[i]
	}
	return nil
}

// listExplainable prints the kinds (unsafe ones marked) and the properties by side.
func listExplainable(w io.Writer) {
	fmt.Fprintln(w, "Anomaly kinds (* unsafe: costs money or leaks data in production):")
	for _, k := range reports.Kinds {
		mark := " "
		if k.Unsafe() {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %s\n", mark, k)
	}
	fmt.Fprintln(w, "\nProperties:")
	for _, p := range framework.Properties() {
		fmt.Fprintf(w, "    %-28s side:%s\n", p.Name, p.Side)
	}
	fmt.Fprintln(w, "\nretrysafe explain NAME says what one means.")
}

// writeKind prints a kind's explanation.
func writeKind(w io.Writer, e reports.Explanation) {
	what := "anomaly kind, differs from what the target declares"
	if e.Kind.Unsafe() {
		what = "anomaly kind, unsafe: costs money or leaks data in production"
	}
	fmt.Fprintf(w, "%s (%s)\n\n", e.Kind, what)
	fmt.Fprintf(w, "  %s\n\n", wrap(e.Meaning, 78, "  "))
	fmt.Fprintln(w, "Common causes in real implementations:")
	for _, c := range e.Causes {
		fmt.Fprintf(w, "  - %s\n", wrap(c, 76, "    "))
	}
	fmt.Fprintln(w, "\nConfirm by hand:")
	fmt.Fprintf(w, "  %s\n", wrap(e.Confirm, 78, "  "))
}

// writeProperty prints what a property checks, the bugs it exists to catch (the reference's
// mutants model bugs real implementations shipped) and how to confirm a failure.
func writeProperty(w io.Writer, p *framework.Property) {
	fmt.Fprintf(w, "%s (property, side %s; labels %s)\n\n", p.Name, p.Side, strings.Join(p.AllLabels(), ", "))
	fmt.Fprintf(w, "  MUST: %s\n", wrap(p.MustText(), 72, "        "))
	if len(p.Needs) > 0 {
		fmt.Fprintf(w, "  needs: %s\n", wrap(strings.Join(p.Needs, "; "), 71, "         "))
	}
	if len(p.Catches) > 0 {
		fmt.Fprintln(w, "\nCommon causes in real implementations (the reference's mutants it catches):")
		for _, m := range p.Catches {
			line := m
			if bug := mutantBug(p.Side, m); bug != "" {
				line += ": " + bug
			}
			fmt.Fprintf(w, "  - %s\n", wrap(line, 76, "    "))
		}
	}
	fmt.Fprintln(w, "\nConfirm by hand:")
	confirm := fmt.Sprintf("Run the property alone: retrysafe run FILE --label-filter property:%s. A failure "+
		"prints its reproduction, a retrysafe run line with --focus, --seed and --key: run it again to send the "+
		"same requests with the same keys, then read its attempts and counts, and the kinds on its found: line "+
		"(retrysafe explain KIND says what each means). retrysafe serve --mutant NAME starts the reference with "+
		"one of the bugs above, to see what a failure of this property looks like.", p.Name)
	fmt.Fprintf(w, "  %s\n", wrap(confirm, 78, "  "))
}

// mutantBug is the bug of the reference mutant named name, looked up on the property's side
// first (then the API's, the consumer's, the client's); "" when there is none of that name.
func mutantBug(side, name string) string {
	type bug struct{ side, text string }
	var found []bug
	for _, m := range reference.Mutants {
		if string(m.Name) == name {
			found = append(found, bug{framework.SideAPI, m.Bug})
		}
	}
	for _, m := range consumer.Mutants {
		if string(m.Name) == name {
			found = append(found, bug{framework.SideConsumer, "consumer: " + m.Bug})
		}
	}
	for _, m := range client.Mutants {
		if string(m.Name) == name {
			found = append(found, bug{framework.SideClient, "client: " + m.Bug})
		}
	}
	if i := slices.IndexFunc(found, func(b bug) bool { return b.side == side }); i >= 0 {
		return found[i].text
	}
	if len(found) > 0 {
		return found[0].text
	}
	return ""
}
