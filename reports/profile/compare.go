package profile

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Change is one behaviour field whose value differs between two profiles.
type Change struct {
	// Field names the field.
	Field string
	// Old and New are the field in each profile, with their evidence.
	Old, New Field
}

// Compare lists the fields whose behaviour changed from before to after: the value, whether it
// is unsafe, or whether it deviates from the IETF draft. A field that is not probed in either profile, the targets' addresses and the
// evidence itself are not compared.
func Compare(before, after *Profile) []Change {
	var names []string
	for _, prof := range []*Profile{before, after} {
		for _, f := range prof.Fields {
			if !slices.Contains(names, f.Name) {
				names = append(names, f.Name)
			}
		}
	}
	slices.SortStableFunc(names, func(a, b string) int { return FieldRank(a) - FieldRank(b) })
	var out []Change
	for _, name := range names {
		o, n := before.Field(name), after.Field(name)
		if o == nil || n == nil || !o.Probed() || !n.Probed() {
			continue
		}
		if o.Value != n.Value || (o.Unsafe == "") != (n.Unsafe == "") || (o.Deviation == "") != (n.Deviation == "") {
			out = append(out, Change{Field: name, Old: *o, New: *n})
		}
	}
	return out
}

// FieldRank is a field's position in FieldOrder (unknown names last).
func FieldRank(name string) int {
	if i := slices.Index(FieldOrder, name); i >= 0 {
		return i
	}
	return len(FieldOrder)
}

// WriteChanges writes the changes for a person: each field by name, old -> new, then the old
// and the new evidence, attempt by attempt.
func WriteChanges(w io.Writer, changes []Change) {
	if len(changes) == 0 {
		io.WriteString(w, "drift: no behaviour field changed\n")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "drift: %d behaviour field(s) changed: %s\n", len(changes), strings.Join(changedNames(changes), ", "))
	for _, c := range changes {
		fmt.Fprintf(&b, "\n%s: %s -> %s\n", c.Field, valueText(c.Old), valueText(c.New))
		writeEvidence(&b, "old", c.Old)
		writeEvidence(&b, "new", c.New)
	}
	io.WriteString(w, b.String())
}

// changedNames lists the names of the changed fields.
func changedNames(changes []Change) []string {
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Field
	}
	return names
}

// valueText is a value with its unsafe and deviation marks.
func valueText(f Field) string {
	s := f.Value
	if f.Unsafe != "" {
		s += " (UNSAFE: " + f.Unsafe + ")"
	}
	if f.Deviation != "" {
		s += " (deviation: " + f.Deviation + ")"
	}
	return s
}

// writeEvidence writes a field's note, records and attempts, indented.
func writeEvidence(b *strings.Builder, label string, f Field) {
	fmt.Fprintf(b, "  %s evidence:", label)
	if f.Note != "" {
		b.WriteString(" " + oneLine(f.Note))
	}
	b.WriteString("\n")
	for _, x := range f.Evidence {
		fmt.Fprintf(b, "    %s\n", x.Line())
	}
	for _, c := range f.Records {
		fmt.Fprintf(b, "    records(%s, %s, ref %s) = %d\n", c.Op, c.Tenant, c.Ref, c.Records)
	}
}

// Line is the exchange on one line: "#5 POST URL (variant body) key K -> 422 {body}".
func (x Exchange) Line() string {
	s := fmt.Sprintf("#%d %s %s", x.Seq, x.Method, x.URL)
	if x.Tenant != "" {
		s += " as " + x.Tenant
	}
	if x.Sent != "" {
		s += " (" + x.Sent + ")"
	}
	if x.Key != "" {
		s += " key " + x.Key
	}
	switch {
	case x.Status != 0:
		s += fmt.Sprintf(" -> %d", x.Status)
	default:
		s += " -> " + x.Outcome + ": " + x.Err
	}
	for _, name := range slices.Sorted(maps.Keys(x.Headers)) {
		s += fmt.Sprintf(" [%s: %s]", name, x.Headers[name])
	}
	if x.Body != "" {
		body := oneLine(x.Body)
		if r := []rune(body); len(r) > 120 {
			body = string(r[:120]) + "..."
		}
		s += " " + body
	}
	return s
}

// oneLine folds white space, so that a note or a body stays on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
