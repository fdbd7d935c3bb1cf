package profile

import (
	"fmt"
	"io"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
)

// WriteText writes the profile for a person: a header line, one row per field (name, value,
// evidence summary or why it was not probed), the unsafe findings, the deviations from the
// IETF draft (apart: a deviation is a choice, not a bug), and the probed fields as a profile
// block to paste into the target file.
func WriteText(w io.Writer, p *Profile) {
	var b strings.Builder
	fmt.Fprintf(&b, "retrysafe probe: %s (%s), run %s: %d requests in %s\n", p.Target.Name,
		strings.Join(p.Target.Instances, ", "), p.RunID, p.Attempts, p.Finished.Sub(p.Started).Round(1e6))
	if p.KeyPrefix != "" {
		fmt.Fprintf(&b, "keys: --key %s (the same prefix sends the same keys again)\n", p.KeyPrefix)
	}
	b.WriteString("\n")
	rows := [][]string{{"FIELD", "VALUE", "EVIDENCE"}}
	for _, f := range p.Fields {
		value, evidence := f.Value, f.Summary()
		if f.Unsafe != "" {
			value += "  UNSAFE"
		}
		if f.Deviation != "" {
			value += "  ≠ draft"
		}
		if !f.Probed() {
			evidence = oneLine(f.Note)
		}
		rows = append(rows, []string{f.Name, value, evidence})
	}
	reports.WriteAligned(&b, rows)
	if unsafe := p.Unsafe(); len(unsafe) > 0 {
		fmt.Fprintf(&b, "\nUNSAFE (%d):\n", len(unsafe))
		for _, f := range unsafe {
			fmt.Fprintf(&b, "  %s = %s: %s\n", f.Name, f.Value, f.Unsafe)
		}
	}
	if devs := p.Deviations(); len(devs) > 0 {
		fmt.Fprintf(&b, "\nDEVIATIONS from the IETF draft (%d; declare them if they are the API's choice):\n", len(devs))
		for _, f := range devs {
			fmt.Fprintf(&b, "  %s = %s: %s\n", f.Name, f.Value, f.Deviation)
		}
	}
	if lines := p.Expectations(); len(lines) > 0 {
		b.WriteString("\nas a target file's expectations (probed fields only):\nprofile:\n")
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	io.WriteString(w, b.String())
}
