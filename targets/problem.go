package targets

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Problem is one thing wrong with a target file: where it is and what to do about it.
type Problem struct {
	// File is the target file's path as given to Load (or the name given to Parse).
	File string
	// Line is the 1-based line the problem was found on; 0 when it concerns the whole file.
	Line int
	// Field is the dotted path of the field, such as "operations[0].body"; "" for the whole file.
	Field string
	// Message says what is wrong and, where possible, what would be right.
	Message string
}

// String formats the problem as "FILE:LINE: field: message", the form editors and CI logs link to.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// ValidationError is returned by Load and Parse when the target file has problems. It holds every
// problem found, not only the first, sorted by line.
type ValidationError struct {
	Problems []Problem
}

// Error joins all problems, one per line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Validate loads the target file at path (expanding ${NAME} from the process environment) and returns
// every problem found, or nil when the file is valid, and the warnings of a valid file. It is the
// entry point of `retrysafe validate`, which checks a file before its environment is set: an
// unset ${NAME} without a default is a warning, not a problem, and the rest of the file is
// checked with <NAME> standing in (the value's own checks, a duration or a URL made of it,
// skipped). Load, which a run uses, still refuses it.
func Validate(path string) (problems, warnings []Problem) {
	t, err := loadFile(path, true)
	if err == nil {
		t.Close()
		return nil, t.Warnings
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Problems, nil
	}
	return []Problem{{File: path, Message: err.Error()}}, nil
}

// problems collects Problems while a file is decoded.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(line int, field, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := slices.Clone(ps.list)
	slices.SortStableFunc(list, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	list = slices.Compact(list)
	return &ValidationError{Problems: list}
}

// Load reads the target file at path, expanding ${NAME} and ${NAME:-default} from the process
// environment. Relative file references in it (tls.ca_file, lifecycle.dir) are resolved against the
// file's folder. Problems are returned as a *ValidationError.
func Load(path string) (*Target, error) { return loadFile(path, false) }

// loadFile is Load, with stand-ins for unset variables when standIn is set (Validate).
func loadFile(path string, standIn bool) (*Target, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ValidationError{Problems: []Problem{{File: path, Message: fmt.Sprintf("cannot read the target file: %v", err)}}}
	}
	return parseTarget(path, data, os.LookupEnv, standIn)
}
