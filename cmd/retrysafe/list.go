package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newListCmd) }

func newListCmd() *cobra.Command {
	var sel framework.Selection
	cmd := &cobra.Command{
		Use:   "list [--label-filter EXPR]",
		Short: "List every property with what the target MUST do, its labels and the fields it needs",
		Long: `List every property with what the target MUST do, its labels, the fields it needs, the
reference mutants it catches and what it covers.

--label-filter EXPR lists only what 'retrysafe run --label-filter EXPR' would select, e.g.
'events', 'side:consumer && !fault:process' or 'property:race || property:replay'. A label
that a spec takes from the target (consumer:TRANSPORT, events:TRANSPORT, fault:downstream on
the sink path, scenario:bare-error) selects the property on that path only, which 'selects:'
then names. Labels named after the file's clients and configurations (client:NAME,
config:NAME) need the file: list does not know them. Which of a property's specs apply to one
target file shows in its run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := framework.CheckLabelFilter(sel.LabelFilter); err != nil {
				return usageErr("%v", err)
			}
			w := cmd.OutOrStdout()
			n := 0
			for _, p := range framework.Properties() {
				sets, _ := sel.Selects(p)
				if len(sets) == 0 {
					continue
				}
				if n > 0 {
					fmt.Fprintln(w)
				}
				n++
				fmt.Fprintf(w, "%s\n", p.Name)
				if only := onlyOn(p, sets); only != "" {
					fmt.Fprintf(w, "  selects: %s\n", wrap(only, 80, "           "))
				}
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
			if n == 0 {
				fmt.Fprintf(w, "no property has specs that --label-filter %q selects\n", sel.LabelFilter)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&sel.LabelFilter, "label-filter", "", "list only the properties a run with this Ginkgo label filter selects, e.g. 'events' or 'side:consumer && !fault:process'")
	return cmd
}

// onlyOn says on which of its paths a filter selects a property when it does not select every
// one ("" when it does), e.g. "only specs labelled consumer:amqp, consumer:nats" or "only specs
// with fault:downstream".
func onlyOn(p *framework.Property, sets [][]string) string {
	all := p.LabelSets()
	if len(sets) == len(all) {
		return ""
	}
	base := len(p.AllLabels())
	options := append([]string{""}, p.SpecLabels...)
	// matched[v] are the spec-label options selected with the transport variant v ("" = none).
	var variants []string
	matched := map[string][]string{}
	for _, set := range sets {
		v, opt := "", ""
		for _, l := range set[base:] {
			if slices.Contains(p.SpecLabels, l) {
				opt = l
			} else {
				v = l
			}
		}
		if _, seen := matched[v]; !seen {
			variants = append(variants, v)
		}
		matched[v] = append(matched[v], opt)
	}
	describe := func(opts []string) string {
		switch {
		case len(opts) == len(options):
			return ""
		case slices.Contains(opts, ""):
			var without []string
			for _, o := range options[1:] {
				if !slices.Contains(opts, o) {
					without = append(without, o)
				}
			}
			return "without " + strings.Join(without, " or ")
		}
		return "with " + strings.Join(opts, " or ")
	}
	allVariants := len(all) / len(options)
	first := describe(matched[variants[0]])
	same := len(variants) == allVariants
	for _, v := range variants {
		same = same && describe(matched[v]) == first
	}
	if same {
		return "only specs " + first
	}
	parts := make([]string, len(variants))
	for i, v := range variants {
		parts[i] = strings.TrimSpace(v + " " + describe(matched[v]))
	}
	return "only specs labelled " + strings.Join(parts, ", ")
}

// wrap folds text at width (reports.WrapWords), indenting continuation lines.
func wrap(text string, width int, indent string) string {
	return strings.Join(reports.WrapWords(text, width), "\n"+indent)
}
