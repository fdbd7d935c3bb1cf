package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// SchemaVersion names the schema of a behaviour profile file. Run reports have their own
// ("retrysafe.report/v1"); readers tell the two apart by the "schema" field.
const SchemaVersion = "retrysafe.profile/v1"

// NotProbed is the value of a field the probe could not establish reliably.
const NotProbed = "not-probed"

// The field names, in the order a profile lists them. Most are the target file's profile fields;
// replay, reordered_body, significant_key_length, tenant_scope, unauthenticated_status and
// operation_scope describe behaviour the expectation profile has no knob for.
const (
	FieldReplay                = "replay"
	FieldReplayHeader          = "replay_header"
	FieldMismatchStatus        = "mismatch_status"
	FieldReorderedBody         = "reordered_body"
	FieldInFlight              = "in_flight"
	FieldMissingKeyStatus      = "missing_key_status"
	FieldEmptyKeyStatus        = "empty_key_status"
	FieldLongKeyStatus         = "long_key_status"
	FieldMaxKeyLength          = "max_key_length"
	FieldSignificantKeyLength  = "significant_key_length"
	FieldKeyForms              = "key_forms"
	FieldTenantScope           = "tenant_scope"
	FieldUnauthenticatedStatus = "unauthenticated_status"
	FieldOperationScope        = "operation_scope"
	FieldErrorPolicy           = "error_policy"
	FieldExpired               = "expired"
	// FieldReplayReturns is what a replay returns: original, current or reference (the target
	// file's profile.replay_returns).
	FieldReplayReturns = "replay_returns"
)

// FieldOrder lists every field name in display order.
var FieldOrder = []string{FieldReplay, FieldReplayHeader,
	FieldReplayReturns,
	FieldMismatchStatus, FieldReorderedBody, FieldInFlight,
	FieldMissingKeyStatus, FieldEmptyKeyStatus, FieldLongKeyStatus, FieldMaxKeyLength, FieldSignificantKeyLength,
	FieldKeyForms, FieldTenantScope, FieldUnauthenticatedStatus, FieldOperationScope, FieldErrorPolicy, FieldExpired}

// Profile is the observed behaviour of one target: what `retrysafe probe` writes.
type Profile struct {
	// Schema is SchemaVersion.
	Schema string `json:"schema"`
	// Tool names the program that wrote the profile.
	Tool string `json:"tool,omitempty"`
	// Target describes the API probed.
	Target TargetInfo `json:"target"`
	// RunID names the probe's run; every {{.Ref}} it sent starts with "rs-" + RunID.
	RunID string `json:"run_id"`
	// KeyPrefix is the run's key prefix (`retrysafe probe --key`): with the target's key.format it
	// makes every idempotency key the probe sent, so the same prefix sends the same keys again.
	KeyPrefix string `json:"key_prefix,omitempty"`
	// Base is the target file's profile base ("ietf" or "stripe"); under "ietf" the fields
	// that contradict a SHOULD of the IETF draft carry a Deviation.
	Base string `json:"base,omitempty"`
	// Started and Finished bound the probe.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Attempts is how many requests the probe sent to the target.
	Attempts int `json:"attempts"`
	// Fields are the inferred behaviours, in FieldOrder.
	Fields []Field `json:"fields"`
}

// TargetInfo names the probed target (no credentials).
type TargetInfo struct {
	// Name is the target's name from its target file.
	Name string `json:"name"`
	// File is the target file's path.
	File string `json:"file,omitempty"`
	// Instances are the base URLs (redacted); not compared by Compare.
	Instances []string `json:"instances,omitempty"`
}

// Field is one inferred behaviour with the evidence it rests on.
type Field struct {
	// Name is one of the Field* constants.
	Name string `json:"name"`
	// Value is written as in a target file's profile ("422", "wait-replay", "[quoted, bare]",
	// "processed", "none" for no replay header), or NotProbed.
	Value string `json:"value"`
	// Unsafe says why the observed behaviour is unsafe (a duplicate record, a response served
	// across tenants or operations, a 5xx to a race loser, another request's response
	// replayed); "" when it is not.
	Unsafe string `json:"unsafe,omitempty"`
	// Deviation, under the ietf base, says what the IETF draft's SHOULD expects where the
	// observed value contradicts it ("the draft says 422 for a reused key with another
	// payload"); "" when it does not. A deviation is not unsafe by itself.
	Deviation string `json:"deviation,omitempty"`
	// Note explains the value, or why the field was not probed.
	Note string `json:"note,omitempty"`
	// Operation names the target operation the field was probed on.
	Operation string `json:"operation,omitempty"`
	// Evidence are the attempts the value was inferred from.
	Evidence []Exchange `json:"evidence,omitempty"`
	// Records are the business records counted through the operation's observer afterwards.
	Records []Count `json:"records,omitempty"`
}

// Exchange is one attempt as evidence: the request line and what came back (redacted).
type Exchange struct {
	// Seq is the attempt's number in the probe's history.
	Seq int64 `json:"seq"`
	// Op, Tenant and Key say which operation, caller and idempotency key (long keys abbreviated).
	Op     string `json:"op,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	Key    string `json:"key,omitempty"`
	// Method and URL are the request line.
	Method string `json:"method"`
	URL    string `json:"url"`
	// Sent says how the attempt differed from an ordinary one ("variant body", "no key", ...).
	Sent string `json:"sent,omitempty"`
	// Status is the answer's status; 0 when none came.
	Status int `json:"status,omitempty"`
	// Outcome is ok, failed or unknown (see suites/history).
	Outcome string `json:"outcome"`
	// Headers are the answer's idempotency, replay and Retry-After headers.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the start of the answer's body.
	Body string `json:"body,omitempty"`
	// Err is the transport error, if any.
	Err string `json:"error,omitempty"`
}

// Count is a record count of one operation, tenant and ref.
type Count struct {
	// Op, Tenant and Ref say whose records were counted.
	Op     string `json:"op"`
	Tenant string `json:"tenant,omitempty"`
	Ref    string `json:"ref"`
	// Records is the count the observer returned.
	Records int `json:"records"`
}

// Probed reports whether the field holds an observed value.
func (f Field) Probed() bool { return f.Value != NotProbed && f.Value != "" }

// Field returns the named field, or nil.
func (p *Profile) Field(name string) *Field {
	for i := range p.Fields {
		if p.Fields[i].Name == name {
			return &p.Fields[i]
		}
	}
	return nil
}

// Unsafe returns the fields whose observed behaviour is unsafe.
func (p *Profile) Unsafe() []Field { return p.where(func(f Field) bool { return f.Unsafe != "" }) }

// Deviations returns the fields whose observed value contradicts a SHOULD of the IETF draft.
func (p *Profile) Deviations() []Field {
	return p.where(func(f Field) bool { return f.Deviation != "" })
}

// where returns the fields keep keeps, in order.
func (p *Profile) where(keep func(Field) bool) []Field {
	var out []Field
	for _, f := range p.Fields {
		if keep(f) {
			out = append(out, f)
		}
	}
	return out
}

// ExpectationFields are the fields a target file's profile block knows, in that block's order.
var ExpectationFields = []string{FieldMismatchStatus, FieldInFlight, FieldMissingKeyStatus, FieldEmptyKeyStatus,
	FieldLongKeyStatus, FieldMaxKeyLength, FieldKeyForms, FieldReplayHeader, FieldErrorPolicy, FieldExpired,
	FieldOperationScope, // operation_scope: per-operation | shared, as the target file declares it
	FieldReplayReturns}

// Expectations returns the probed fields that a target file's profile block accepts, as YAML
// lines ("mismatch_status: 422"), in the order of that block. Unsafe values are left out with a
// comment: they are not behaviour to expect.
func (p *Profile) Expectations() []string {
	var out []string
	for _, name := range ExpectationFields {
		f := p.Field(name)
		if f == nil || !f.Probed() {
			continue
		}
		if f.Unsafe != "" {
			out = append(out, fmt.Sprintf("# %s: %s  (left out: unsafe: %s)", name, f.Value, f.Unsafe))
			continue
		}
		out = append(out, name+": "+YAMLValue(name, f.Value))
	}
	return out
}

// YAMLValue writes a probed value of the named field as a target file's profile block takes it.
func YAMLValue(name, v string) string {
	switch name {
	case FieldReplayHeader:
		if v == "none" {
			return `""`
		}
		return strconv.Quote(v)
	}
	return v
}

// Encode writes p as indented JSON.
func (p *Profile) Encode(w io.Writer) error {
	if p.Schema == "" {
		p.Schema = SchemaVersion
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// WriteFile writes p to path as indented JSON.
func (p *Profile) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Decode reads a profile and checks its schema.
func Decode(data []byte) (*Profile, error) {
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	switch p.Schema {
	case SchemaVersion:
	case "":
		return nil, errors.New("schema: missing (not a retrysafe profile?)")
	default:
		return nil, fmt.Errorf("schema: %q is not a profile (this retrysafe reads %q)", p.Schema, SchemaVersion)
	}
	for i, f := range p.Fields {
		if strings.TrimSpace(f.Name) == "" {
			return nil, fmt.Errorf("fields[%d].name: missing", i)
		}
	}
	return &p, nil
}

// ReadFile reads a profile written by WriteFile. Errors start with the path.
func ReadFile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Summary is one line naming the evidence: "#4 201, #5 422; records 1".
func (f Field) Summary() string {
	var parts []string
	for _, x := range f.Evidence {
		s := fmt.Sprintf("#%d", x.Seq)
		switch {
		case x.Status != 0:
			s += fmt.Sprintf(" %d", x.Status)
		case x.Outcome != "":
			s += " " + x.Outcome
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, ", ")
	if len(parts) > 8 {
		out = strings.Join(parts[:4], ", ") + fmt.Sprintf(", ... %d more ..., ", len(parts)-6) + strings.Join(parts[len(parts)-2:], ", ")
	}
	if len(f.Records) > 0 {
		counts := make([]string, len(f.Records))
		for i, c := range f.Records {
			counts[i] = fmt.Sprint(c.Records)
		}
		out += "; records " + strings.Join(counts, ", ")
	}
	return out
}
