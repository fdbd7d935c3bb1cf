package probe

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/targets"
)

// Suggest returns the target file src (the file t was loaded from) with its profile block
// replaced by the expectations prof observed, so that the file describes the API as probed:
// each safe probed field takes its probed value; an unsafe one is left out as a comment (as
// Profile.Expectations does) and the field keeps what the target file expects; a field the
// probe did not establish keeps the target file's value (or its base's default), saying so.
// The rest of the file is kept byte for byte, comments and ${NAME} placeholders included.
func Suggest(src []byte, t *targets.Target, prof *profile.Profile) ([]byte, error) {
	start, end, err := profileLines(src)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(src), "\n")
	block := suggestedBlock(t.Profile, prof)
	var b strings.Builder
	if start == 0 { // no profile block: add one at the end
		b.WriteString(string(src))
		if len(src) > 0 && !bytes.HasSuffix(src, []byte("\n")) {
			b.WriteString("\n")
		}
		b.WriteString("\n" + block)
		return []byte(b.String()), nil
	}
	b.WriteString(strings.Join(lines[:start-1], ""))
	b.WriteString(block)
	b.WriteString(strings.Join(lines[end:], ""))
	return []byte(b.String()), nil
}

// profileLines finds the top-level profile block of a target file: its first and last lines
// (1-based), the comment and blank lines just before the next top-level key left to that key.
// start is 0 when the file has no profile block.
func profileLines(src []byte) (start, end int, err error) {
	f, err := parser.ParseBytes(src, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read the target file as YAML: %w", err)
	}
	var keys []*ast.MappingValueNode
	for _, doc := range f.Docs {
		switch n := doc.Body.(type) {
		case *ast.MappingNode:
			keys = append(keys, n.Values...)
		case *ast.MappingValueNode:
			keys = append(keys, n)
		}
	}
	if len(keys) == 0 {
		return 0, 0, errors.New("the target file is not a YAML mapping")
	}
	lines := strings.Split(string(src), "\n")
	end = len(lines)
	for i, kv := range keys {
		if kv.Key.GetToken().Value != "profile" {
			continue
		}
		start = kv.Key.GetToken().Position.Line
		if i+1 < len(keys) {
			end = keys[i+1].Key.GetToken().Position.Line - 1
		}
		for end > start && leftToNextKey(lines[end-1]) {
			end--
		}
		return start, end, nil
	}
	return 0, 0, nil
}

// leftToNextKey reports a line that belongs to what follows it: blank, or a comment at the
// left margin.
func leftToNextKey(line string) bool {
	s := strings.TrimRight(line, " \t\r")
	return s == "" || strings.HasPrefix(s, "#")
}

// suggestedBlock writes the profile block: the base, then each expectation field.
func suggestedBlock(declared targets.Profile, prof *profile.Profile) string {
	var b strings.Builder
	b.WriteString("profile:\n")
	fmt.Fprintf(&b, "  # Suggested by `retrysafe probe` (run %s) from the behaviour it observed; a field it could\n", prof.RunID)
	b.WriteString("  # not establish, or found unsafe, keeps what the target file declared (or its base's default).\n")
	base := declared.Base
	if base == "" {
		base = "ietf"
	}
	b.WriteString("  base: " + base + "\n")
	for _, name := range profile.ExpectationFields {
		f := prof.Field(name)
		switch {
		case f != nil && f.Probed() && f.Unsafe == "":
			line := name + ": " + profile.YAMLValue(name, f.Value)
			if f.Deviation != "" {
				line = pad(line) + "# deviation: " + oneLine(f.Deviation)
			}
			b.WriteString("  " + line + "\n")
		case f != nil && f.Probed():
			fmt.Fprintf(&b, "  # %s: %s  (left out: unsafe: %s)\n", name, f.Value, oneLine(f.Unsafe))
			writeDeclared(&b, name, declared, "expected by the target file; observed unsafe")
		default:
			writeDeclared(&b, name, declared, "not probed: kept from the target file")
		}
	}
	if ig := ignoreLines(declared.Ignore); len(ig) > 0 {
		b.WriteString("  ignore:                           # kept from the target file\n")
		for _, l := range ig {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}

// writeDeclared writes the target file's value of a field, with a comment.
func writeDeclared(b *strings.Builder, name string, p targets.Profile, why string) {
	for i, l := range declaredLines(name, p) {
		if i == 0 {
			l = pad(l) + "# " + why
		}
		b.WriteString("  " + l + "\n")
	}
}

// declaredLines writes the value of a field of a loaded profile as target file lines (two for
// the fields that have a companion status: in_flight and expired).
func declaredLines(name string, p targets.Profile) []string {
	switch name {
	case profile.FieldMismatchStatus:
		return []string{name + ": " + p.MismatchStatus.String()}
	case profile.FieldInFlight:
		if p.InFlight == targets.InFlightStatus {
			return []string{name + ": " + p.InFlightStatus.String()}
		}
		return []string{name + ": " + string(p.InFlight), "in_flight_status: " + p.InFlightStatus.String()}
	case profile.FieldMissingKeyStatus:
		return []string{name + ": " + p.MissingKeyStatus.String()}
	case profile.FieldEmptyKeyStatus:
		return []string{name + ": " + p.EmptyKeyStatus.String()}
	case profile.FieldLongKeyStatus:
		return []string{name + ": " + p.LongKeyStatus.String()}
	case profile.FieldMaxKeyLength:
		if p.MaxKeyLength == 0 {
			return []string{name + ": none"}
		}
		return []string{name + ": " + strconv.Itoa(p.MaxKeyLength)}
	case profile.FieldKeyForms:
		forms := make([]string, len(p.KeyForms))
		for i, f := range p.KeyForms {
			forms[i] = string(f)
		}
		return []string{name + ": [" + strings.Join(forms, ", ") + "]"}
	case profile.FieldReplayHeader:
		h := p.ReplayHeader.Name
		if p.ReplayHeader.Value != "" {
			h += ": " + p.ReplayHeader.Value
		}
		return []string{name + ": " + strconv.Quote(h)}
	case profile.FieldErrorPolicy:
		return []string{name + ": " + string(p.ErrorPolicy)}
	case profile.FieldOperationScope:
		if p.OperationScope == targets.ScopeShared {
			return []string{name + ": " + string(p.OperationScope), "operation_reuse_status: " + p.OperationReuseStatus.String()}
		}
		return []string{name + ": " + string(p.OperationScope)}
	case profile.FieldReplayReturns:
		return []string{name + ": " + string(p.ReplayReturns)}
	case profile.FieldExpired:
		if p.Expired == targets.ExpiredReject {
			return []string{name + ": " + string(p.Expired), "expired_status: " + p.ExpiredStatus.String()}
		}
		return []string{name + ": " + string(p.Expired)}
	}
	return nil
}

// ignoreLines writes what a profile's ignore block adds to the defaults.
func ignoreLines(ig targets.Ignore) []string {
	var out []string
	if len(ig.JSONPaths) > 0 {
		quoted := make([]string, len(ig.JSONPaths))
		for i, p := range ig.JSONPaths {
			quoted[i] = strconv.Quote(p)
		}
		out = append(out, "json_paths: ["+strings.Join(quoted, ", ")+"]")
	}
	var extra []string
	for _, h := range ig.Headers {
		if !slices.ContainsFunc(targets.DefaultIgnoredHeaders, func(d string) bool { return strings.EqualFold(d, h) }) {
			extra = append(extra, h)
		}
	}
	if len(extra) > 0 {
		out = append(out, "headers: ["+strings.Join(extra, ", ")+"]")
	}
	return out
}

// pad pads a YAML line to the comment column.
func pad(line string) string {
	const column = 36
	if len(line) >= column {
		return line + "  "
	}
	return line + strings.Repeat(" ", column-len(line))
}

// oneLine folds white space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
