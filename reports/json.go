package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// MarshalJSON encodes r with its schema, and adds the derived fields
// "verdict" and "counts" (see Run.Verdict and Run.Counts), which readers
// may use and decoding ignores.
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run // no methods: no recursion
	if r.Schema == "" {
		r.Schema = SchemaVersion
	}
	if r.Properties == nil {
		r.Properties = []Property{}
	}
	// The outer Schema shadows plain's, so that schema, verdict and counts
	// come first in the file; the remaining fields follow in Run's order.
	return marshal(struct {
		Schema  string          `json:"schema"`
		Verdict Verdict         `json:"verdict"`
		Counts  map[Verdict]int `json:"counts"`
		plain
	}{r.Schema, r.Verdict(), r.Counts(), plain(r)})
}

// MarshalJSON encodes p with its Duration as duration_seconds.
func (p Property) MarshalJSON() ([]byte, error) {
	type plain Property
	return marshal(struct {
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}{plain(p), p.Duration.Seconds()})
}

// UnmarshalJSON decodes p, reading duration_seconds into Duration.
func (p *Property) UnmarshalJSON(data []byte) error {
	type plain Property
	var v struct {
		*plain
		DurationSeconds float64 `json:"duration_seconds"`
	}
	v.plain = (*plain)(p)
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	p.Duration = seconds(v.DurationSeconds)
	return nil
}

// MarshalJSON encodes s with its Duration as duration_seconds.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	return marshal(struct {
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}{plain(s), s.Duration.Seconds()})
}

// UnmarshalJSON decodes s, reading duration_seconds into Duration.
func (s *Spec) UnmarshalJSON(data []byte) error {
	type plain Spec
	var v struct {
		*plain
		DurationSeconds float64 `json:"duration_seconds"`
	}
	v.plain = (*plain)(s)
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	s.Duration = seconds(v.DurationSeconds)
	return nil
}

// marshal encodes v as json.Marshal does but without escaping <, > and &,
// which abound in HTTP transcripts and would make the file hard to read.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// seconds converts a number of seconds to a Duration, rounding to the
// nanosecond so that a written Duration reads back unchanged.
func seconds(f float64) time.Duration {
	return time.Duration(math.Round(f * float64(time.Second)))
}

// EncodeJSON writes r to w as indented JSON in the report.json schema.
func EncodeJSON(w io.Writer, r *Run) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// DecodeJSON reads a report in the report.json schema. It rejects another
// schema version and invalid verdicts, naming the field at fault; fields it
// does not know (added by a newer v1 writer) are ignored.
func DecodeJSON(rd io.Reader) (*Run, error) {
	var r Run
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, err
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// validate checks the schema version and every verdict.
func (r *Run) validate() error {
	switch r.Schema {
	case SchemaVersion:
	case "":
		return errors.New("schema: missing (not a retrysafe report?)")
	default:
		return fmt.Errorf("schema: %q is not supported (this retrysafe reads %q)", r.Schema, SchemaVersion)
	}
	for i, p := range r.Properties {
		if !p.Verdict.Valid() {
			return fmt.Errorf("properties[%d].verdict: %s", i, badVerdict(p.Verdict))
		}
		for j, s := range p.Specs {
			if !s.Verdict.Valid() {
				return fmt.Errorf("properties[%d].specs[%d].verdict: %s", i, j, badVerdict(s.Verdict))
			}
		}
	}
	return nil
}

// badVerdict describes an invalid verdict and lists the valid ones.
func badVerdict(v Verdict) string {
	return fmt.Sprintf("unknown verdict %q (known: pass, fail, unknown, skipped)", string(v))
}

// WriteJSON writes r to path as report.json, creating the directory if
// needed. The file is replaced atomically, so a reader never sees half of it.
func WriteJSON(path string, r *Run) error {
	return writeFile(path, func(w io.Writer) error { return EncodeJSON(w, r) })
}

// ReadJSON reads a report written by WriteJSON; see DecodeJSON. Errors start
// with the path.
func ReadJSON(path string) (*Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := DecodeJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// writeFile renders into a temporary file beside path and renames it over
// path, creating path's directory first.
func writeFile(path string, render func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := render(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
