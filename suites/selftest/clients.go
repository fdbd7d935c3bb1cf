package selftest

import (
	"context"
	"fmt"
	"slices"

	"github.com/retrysafe/retrysafe/reports"

	refclient "github.com/retrysafe/retrysafe/targets/reference/client"
)

// The client rows of the matrix: the reference client (`retrysafe client`), correct (every
// client property) and as each of its mutants (only the property that catches it), each run
// through the embedded client-managed.yaml against the harness's scripted API. The client keeps
// its state in files, not in a store: its rows have one column, ClientStore, and are required.

// ClientStore is the store column of the client rows.
const ClientStore = "none"

// SideClient marks the client rows' results.
const SideClient = "client"

// clientRows lists a row per client mutant and the property that must catch it, filtered by
// name when names is not empty.
func clientRows(names []string) []row {
	var out []row
	for _, m := range refclient.Mutants {
		if len(names) > 0 && !slices.Contains(names, string(m.Name)) {
			continue
		}
		out = append(out, row{name: string(m.Name), client: m.Name, property: m.CaughtBy, required: []string{ClientStore}})
	}
	return out
}

// runClientCorrect runs every client property against the correct reference client.
func runClientCorrect(ctx context.Context, st *stores) ([]Correct, error) {
	run, err := st.runClient(ctx, refclient.MutantNone, "side:client")
	if err != nil {
		return nil, fmt.Errorf("correct client: %w", err)
	}
	out := correctResults(ClientStore, "", run)
	for i := range out {
		out[i].Side = SideClient
	}
	return out, nil
}

// clientFocus narrows a client cell to the specs of its property that catch the mutant, as
// client-managed.yaml's specs are labelled (its configuration default, or the scenarios whose
// errors are not its error shape), so that a cell costs one scenario, not every configuration's:
// a label filter ANDed with property:NAME ("" or absent: every spec of the property).
var clientFocus = map[refclient.Mutant]string{
	refclient.MutantNeverRetries:       "config:default",
	refclient.MutantRetriesRejections:  "!scenario:bare-error",
	refclient.MutantUnbounded:          "config:default",
	refclient.MutantNoKey:              "config:default",
	refclient.MutantTransportResend:    "config:default",
	refclient.MutantSkipsDeclaredRetry: "config:default",
	refclient.MutantSuccessOnBareError: "scenario:bare-error",
	refclient.MutantRetriesUndeclared:  "config:default",
	// issue 38: what decides from an answer's content
	refclient.MutantIgnoresShouldRetryFalse: "config:default",
	refclient.MutantIgnoresErrorCode:        "config:default",
}

// runClientCell runs the property of one client row against the mutant (its focus only).
func runClientCell(ctx context.Context, st *stores, r row, _ string) (Cell, error) {
	cell := Cell{Mutant: r.name, Side: SideClient, Store: ClientStore, Property: r.property, Required: true}
	filter := "property:" + r.property
	if f := clientFocus[r.client]; f != "" {
		filter += " && " + f
	}
	run, err := st.runClient(ctx, r.client, filter)
	if err != nil {
		return cell, err
	}
	judge(&cell, run)
	return cell, nil
}

// runClient runs the selected client properties against the reference client as mutant m.
func (st *stores) runClient(ctx context.Context, m refclient.Mutant, labelFilter string) (*reports.Run, error) {
	t, err := ManagedClient(st.opts.Binary, string(m))
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return st.run(ctx, t, st.n.Add(1), labelFilter, 0) // it keeps its state in files of its own
}
