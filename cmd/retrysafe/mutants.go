package main

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/retrysafe/retrysafe/targets/reference/client"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
	"github.com/spf13/cobra"
)

func newMutantsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mutants",
		Short: "List the mutants of the reference API, consumer and client, one per line, name first",
		Long: `List the mutants, one per line: the name (pass it to serve --mutant), the properties that
must catch it, the stores it runs on, and its bug. The API's come first; the consumer's
(serve --consumer) follow, with the transports they apply to; the client's (client
--mutant, marked client:, no store) come last.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, m := range reference.Mutants {
				stores := strings.Join(m.Stores, ",")
				if len(m.Reported) > 0 {
					stores += " (reported: " + strings.Join(m.Reported, ",") + ")"
				}
				by := strings.Join(append([]string{m.CaughtBy}, m.AlsoCaughtBy...), ",")
				fmt.Fprintf(w, "%-26s caught by %-26s stores %-40s %s\n", m.Name, by, stores, m.Bug)
			}
			for _, m := range consumer.Mutants {
				where := strings.Join(m.Stores, ",") + " on " + strings.Join(m.Transports, ",")
				by := consumerCatches(m)
				fmt.Fprintf(w, "%-26s caught by %-26s stores %-40s consumer: %s\n", m.Name, by, where, m.Bug)
			}
			for _, m := range client.Mutants {
				fmt.Fprintf(w, "%-26s caught by %-26s stores %-40s client: %s\n", m.Name, m.CaughtBy, "-", m.Bug)
			}
			return nil
		},
	}
}

// consumerCatches names the properties that catch a consumer mutant, each with its transports
// when not all of the mutant's and its shape when not the sink one: "redelivery, lost-ack
// (amqp,nats; no-sink), crash-before-ack (nats; long-ack-wait)".
func consumerCatches(m consumer.MutantInfo) string {
	var parts []string
	for _, c := range m.Caught {
		var notes []string
		if len(c.Transports) > 0 && len(c.Transports) < len(m.Transports) {
			notes = append(notes, strings.Join(c.Transports, ","))
		}
		if c.Shape != consumer.ShapeSink {
			notes = append(notes, string(c.Shape))
		}
		if len(notes) > 0 {
			parts = append(parts, c.Property+" ("+strings.Join(notes, "; ")+")")
		} else {
			parts = append(parts, c.Property)
		}
	}
	return strings.Join(parts, ", ")
}
