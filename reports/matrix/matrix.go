// Package matrix puts several targets side by side: one table with a column per target (a
// behaviour profile written by `retrysafe probe`, or a run report written by `retrysafe run`)
// and a row per behaviour and per property verdict. It marks the cells that are unsafe apart
// from the cells that merely differ from the rest of their row (status codes, headers,
// policies), and renders the table in Markdown and HTML. A run report's failure is unsafe when
// one of its anomalies is of an unsafe kind (reports.Kind.Unsafe): the matrix reads kinds, never
// the wording of a message.
package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/reports/profile"
)

// Kinds of column.
const (
	KindProfile = "profile"
	KindRun     = "run report"
)

// PropertyPrefix starts the name of a property verdict row.
const PropertyPrefix = "property "

// Column is one target: its cells by row name.
type Column struct {
	// Name heads the column: a label given (WithLabel), else the target's first instance URL,
	// else (a file that lists no instances) the target's name.
	Name string
	// Target is the target's name from its target file.
	Target string
	// Source is the file the column was read from.
	Source string
	// Kind is KindProfile or KindRun.
	Kind string
	// Cells are keyed by row name (a profile field, or PropertyPrefix + a property name).
	Cells map[string]Cell
	// Order lists the row names of Cells in the source's order.
	Order []string
}

// set adds a cell.
func (c *Column) set(name string, cell Cell) {
	if c.Cells == nil {
		c.Cells = map[string]Cell{}
	}
	if _, dup := c.Cells[name]; !dup {
		c.Order = append(c.Order, name)
	}
	c.Cells[name] = cell
}

// Cell is one value of the table.
type Cell struct {
	// Value is the text shown; "" = no data.
	Value string
	// Unsafe says why the value is unsafe; "" = it is not.
	Unsafe string
	// Note explains the value (shown as a tooltip in HTML).
	Note string
	// Mark classifies the cell within its row; set by Build.
	Mark Mark
}

// Mark classifies a cell within its row.
type Mark int

// The marks, from the least to the most notable.
const (
	Empty     Mark = iota // no data
	NotProbed             // the probe could not establish it
	Same                  // the most common value of the row
	Different             // another value: a difference in status, header or policy
	Unsafe                // an unsafe behaviour
)

// Load reads a profile or a run report, told apart by its "schema" field.
func Load(path string) (Column, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Column{}, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Column{}, fmt.Errorf("%s: not JSON: %v", path, err)
	}
	switch head.Schema {
	case profile.SchemaVersion:
		p, err := profile.Decode(data)
		if err != nil {
			return Column{}, fmt.Errorf("%s: %w", path, err)
		}
		return FromProfile(path, p), nil
	case reports.SchemaVersion:
		r, err := reports.DecodeJSON(bytes.NewReader(data))
		if err != nil {
			return Column{}, fmt.Errorf("%s: %w", path, err)
		}
		return FromRun(path, r), nil
	}
	return Column{}, fmt.Errorf("%s: schema %q is neither a profile (%s) nor a run report (%s)",
		path, head.Schema, profile.SchemaVersion, reports.SchemaVersion)
}

// defaultName is a column's default name: the first instance URL, else the target's name.
func defaultName(target string, instances []string) string {
	if len(instances) > 0 && instances[0] != "" {
		return instances[0]
	}
	return target
}

// WithLabel returns the column named label instead of its default name.
func (c Column) WithLabel(label string) Column {
	c.Name = label
	return c
}

// FromProfile makes a column of a behaviour profile.
func FromProfile(source string, p *profile.Profile) Column {
	c := Column{Name: defaultName(p.Target.Name, p.Target.Instances), Target: p.Target.Name, Source: source, Kind: KindProfile}
	for _, f := range p.Fields {
		c.set(f.Name, Cell{Value: f.Value, Unsafe: f.Unsafe, Note: f.Note})
	}
	return c
}

// FromRun makes a column of a run report: its property verdicts, and the profile it declared
// (which the run checked) as the behaviour rows.
func FromRun(source string, r *reports.Run) Column {
	c := Column{Name: defaultName(r.Target.Name, r.Target.Instances), Target: r.Target.Name, Source: source, Kind: KindRun}
	decl := declared(r.Target.Profile)
	for _, name := range profile.FieldOrder {
		if v, ok := decl[name]; ok {
			c.set(name, Cell{Value: v, Note: "declared in the target file and checked by the run"})
		}
	}
	for _, p := range r.Properties {
		cell := Cell{Value: string(p.Verdict), Note: p.Reason}
		if p.Verdict == reports.Fail {
			cell.Value = "FAIL"
			var noKinds bool
			cell.Unsafe, noKinds = unsafeFailure(p)
			cell.Note = failingSpecs(p)
			if noKinds && cell.Unsafe == "" {
				cell.Note += " (" + noKindsNote + ")"
			}
		}
		c.set(PropertyPrefix+p.Name, cell)
	}
	return c
}

// declared maps a run report's flat profile to the probe's vocabulary.
func declared(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, name := range []string{profile.FieldMismatchStatus, profile.FieldMissingKeyStatus, profile.FieldEmptyKeyStatus,
		profile.FieldLongKeyStatus, profile.FieldMaxKeyLength, profile.FieldErrorPolicy, profile.FieldExpired,
		profile.FieldReplayReturns} {
		if v := m[name]; v != "" {
			out[name] = v
		}
	}
	switch m["in_flight"] {
	case "status", "":
		out[profile.FieldInFlight] = m["in_flight_status"]
	case "either":
		out[profile.FieldInFlight] = "either (" + m["in_flight_status"] + " or wait-replay)"
	default:
		out[profile.FieldInFlight] = m["in_flight"]
	}
	if forms := m["key_forms"]; forms != "" {
		out[profile.FieldKeyForms] = "[" + strings.Join(strings.Split(forms, ","), ", ") + "]"
	}
	if h := m["replay_header"]; h != "" { // "" declares no header required, not a header absent
		out[profile.FieldReplayHeader] = h
	}
	return out
}

// Row is one behaviour or property across the columns.
type Row struct {
	// Name is the profile field, or PropertyPrefix + the property name.
	Name string
	// Cells has one cell per column, in column order.
	Cells []Cell
}

// Table is the matrix.
type Table struct {
	Columns []Column
	Rows    []Row
}

// Build lays the columns side by side: behaviour rows in profile.FieldOrder (plus any other
// field), then the property rows in the order they first appear; rows without any data are
// left out. Columns whose names repeat (one API probed twice) are told apart by their file's
// name, then by a number. Each cell is marked: Unsafe when its value is unsafe, Different when
// it is not the most common value of its row (ties go to the leftmost column), Same, NotProbed
// or Empty otherwise.
func Build(cols []Column) *Table {
	t := &Table{Columns: slices.Clone(cols)}
	uniqueNames(t.Columns)
	for _, name := range rowNames(cols) {
		row := Row{Name: name}
		for _, c := range cols {
			row.Cells = append(row.Cells, c.Cells[name])
		}
		markRow(row.Cells)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// uniqueNames makes the column names distinct: a name that repeats gets its source's file name,
// and one that still repeats a number.
func uniqueNames(cols []Column) {
	n := map[string]int{}
	for _, c := range cols {
		n[c.Name]++
	}
	for i := range cols {
		if n[cols[i].Name] > 1 && cols[i].Source != "" {
			cols[i].Name = fmt.Sprintf("%s (%s)", cols[i].Name, filepath.Base(cols[i].Source))
		}
	}
	seen := map[string]int{}
	for i := range cols {
		if seen[cols[i].Name]++; seen[cols[i].Name] > 1 {
			cols[i].Name = fmt.Sprintf("%s (%d)", cols[i].Name, seen[cols[i].Name])
		}
	}
}

// rowNames lists the rows that have data in some column.
func rowNames(cols []Column) []string {
	var fields, properties []string
	for _, c := range cols {
		for name, cell := range c.Cells {
			if cell.Value == "" {
				continue
			}
			if strings.HasPrefix(name, PropertyPrefix) {
				properties = addOnce(properties, name)
			} else {
				fields = addOnce(fields, name)
			}
		}
	}
	slices.SortStableFunc(fields, func(a, b string) int {
		if d := profile.FieldRank(a) - profile.FieldRank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	order := propertyOrder(cols)
	slices.SortStableFunc(properties, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return append(fields, properties...)
}

// propertyOrder lists row names in the order they first appear in the columns.
func propertyOrder(cols []Column) []string {
	var order []string
	for _, c := range cols {
		for _, name := range c.Order {
			order = addOnce(order, name)
		}
	}
	return order
}

func addOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// markRow marks the cells of one row.
func markRow(cells []Cell) {
	counts := map[string]int{}
	for _, c := range cells {
		if c.Value != "" && c.Value != profile.NotProbed {
			counts[c.Value]++
		}
	}
	mode := ""
	for _, c := range cells {
		if counts[c.Value] > counts[mode] {
			mode = c.Value
		}
	}
	for i := range cells {
		c := &cells[i]
		switch {
		case c.Value == "":
			c.Mark = Empty
		case c.Unsafe != "":
			c.Mark = Unsafe
		case c.Value == profile.NotProbed:
			c.Mark = NotProbed
		case c.Value != mode:
			c.Mark = Different
		default:
			c.Mark = Same
		}
	}
}

// Unsafe lists the unsafe cells as "column: row: reason".
func (t *Table) Unsafe() []string {
	var out []string
	for _, r := range t.Rows {
		for i, c := range r.Cells {
			if c.Mark == Unsafe {
				out = append(out, fmt.Sprintf("%s: %s = %s: %s", t.Columns[i].Name, r.Name, c.Value, c.Unsafe))
			}
		}
	}
	return out
}
