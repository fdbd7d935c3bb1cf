package targets

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// KeyFormat is the shape of the idempotency keys the harness makes for an operation
// (key.format): the default "RUN-SEQ", a UUID, a ULID, or a template over {{.Run}} and {{.Seq}}.
// Every key is derived from the run's key prefix (--key) and a sequence number, so the same
// prefix makes the same keys again whatever the format.
type KeyFormat struct {
	// Kind is "" (RUN-SEQ), "uuid", "ulid" or "template".
	Kind string
	// Template is the template source of a template format.
	Template string

	tmpl *tmpl
}

// The key format kinds.
const (
	KeyFormatDefault  = ""
	KeyFormatUUID     = "uuid"
	KeyFormatULID     = "ulid"
	KeyFormatTemplate = "template"
)

// keyFormatFields are the placeholders of a key.format template.
var keyFormatFields = []string{"Run", "Seq"}

// KeyVars are what a key.format template sees: {{.Run}} (the run's key prefix) and {{.Seq}}.
type KeyVars struct {
	Run, Seq string
}

// keyNamespace is the UUID namespace of the keys retrysafe makes.
var keyNamespace = uuid.MustParse("3f5b7a1e-1c2d-4e8f-9a0b-7c6d5e4f3a21")

// ulidEpoch is the earliest time a generated ULID carries; keys spread over the year after it.
var ulidEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Make returns the key of sequence number seq in the run whose key prefix is run.
func (f KeyFormat) Make(run string, seq int64) string {
	switch f.Kind {
	case KeyFormatUUID:
		return uuid.NewSHA1(keyNamespace, keyID(run, seq)).String()
	case KeyFormatULID:
		sum := sha256.Sum256(keyID(run, seq))
		ms := uint64(ulidEpoch.UnixMilli()) + binary.BigEndian.Uint64(sum[:8])%uint64(365*24*time.Hour/time.Millisecond)
		var u ulid.ULID
		_ = u.SetTime(ms)
		_ = u.SetEntropy(sum[8:18])
		return u.String()
	case KeyFormatTemplate:
		if s, err := f.tmpl.render(KeyVars{Run: run, Seq: strconv.FormatInt(seq, 10)}); err == nil {
			return s
		} // validated at load time: cannot fail
	}
	return fmt.Sprintf("%s-%04d", run, seq)
}

// keyID is what a uuid or ulid key is derived from: RUN/SEQ.
func keyID(run string, seq int64) []byte { return []byte(run + "/" + strconv.FormatInt(seq, 10)) }

// Fixed reports whether the format gives keys of a fixed shape, which padding to a length would
// break (a key at the length limit is then meaningless).
func (f KeyFormat) Fixed() bool { return f.Kind != KeyFormatDefault }

// String names the format as a target file writes it.
func (f KeyFormat) String() string {
	switch f.Kind {
	case KeyFormatDefault:
		return "RUN-SEQ"
	case KeyFormatTemplate:
		return f.Template
	}
	return f.Kind
}

// sampleKeyLength is the length of a key of the format, for validation (uuid 36, ulid 26).
func (f KeyFormat) sampleKeyLength() int { return len(f.Make("rs-0123abcd", 1)) }

// keyFormat decodes key.format.
func (d *decoder) keyFormat(ko *object) KeyFormat {
	s, ok := d.str(ko, "format")
	if !ok {
		return KeyFormat{}
	}
	switch v := strings.TrimSpace(s); {
	case v == KeyFormatUUID || v == KeyFormatULID:
		return KeyFormat{Kind: v}
	case strings.Contains(v, "{{"):
		tp, ok := d.compile(v, srcPos{line: ko.lineOf("format")}, ko.at("format"), keyFormatFields)
		if !ok {
			return KeyFormat{}
		}
		f := KeyFormat{Kind: KeyFormatTemplate, Template: v, tmpl: tp}
		if k := f.Make("rs-0123abcd", 1); k == f.Make("rs-0123abcd", 2) {
			d.ps.add(ko.lineOf("format"), ko.at("format"), "must use {{.Seq}}: every key of a run must differ (got %q twice)", k)
		}
		return f
	}
	d.ps.add(ko.lineOf("format"), ko.at("format"), "must be uuid, ulid or a template over {{.Run}} and {{.Seq}}, got %q", s)
	return KeyFormat{}
}

// DependsOnRun reports whether the format's keys are derived from the run's key prefix, so that
// two runs (and the shards of one run, which share its prefix but not its sequence numbers) never
// make the same key: every format but a template without {{.Run}}.
func (f KeyFormat) DependsOnRun() bool {
	return f.Kind != KeyFormatTemplate || f.Make("rs-run-a", 1) != f.Make("rs-run-b", 1)
}
