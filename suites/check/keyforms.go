package check

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// KeyFormsFound is what one new key sent quoted (RFC 8941), then bare, says of the key forms an
// API accepts: the probe's key_forms field, and what a run that declares no key form sends.
type KeyFormsFound struct {
	// Forms are the forms to use, the default first; nil when it cannot be told (neither form
	// accepted, or an attempt without an answer).
	Forms []targets.KeyForm
	// Note says what the answers showed.
	Note string
	// Deviation names how the API differs from the draft (which expects both forms to be one
	// key); empty when they are.
	Deviation string
}

// OneKey reports whether both forms name one key.
func (f KeyFormsFound) OneKey() bool { return len(f.Forms) == 2 }

// JudgeKeyForms reads the answers to one new key sent quoted (q), then bare (b), and the records
// counted for it (counted false: no count). Both forms are one key only when the evidence shows
// it: one record, or the bare request answered as a replay (a replay marker, or, without a count,
// the quoted one's answer); otherwise only the form that works.
func JudgeKeyForms(q, b history.Attempt, records int, counted bool, ig targets.Ignore) KeyFormsFound {
	ok := func(a history.Attempt) bool { return a.Outcome == history.OK && is2xx(a.Status) }
	both := []targets.KeyForm{targets.KeyQuoted, targets.KeyBare}
	bare := []targets.KeyForm{targets.KeyBare}
	switch {
	case q.Outcome != history.OK || b.Outcome != history.OK:
		return KeyFormsFound{Note: "a request got no answer"}
	case !ok(q) && !ok(b):
		return KeyFormsFound{Note: fmt.Sprintf("neither form was accepted (%d, %d)", q.Status, b.Status)}
	case !ok(b):
		return KeyFormsFound{Forms: []targets.KeyForm{targets.KeyQuoted}, Note: fmt.Sprintf("the bare form was refused with %d", b.Status),
			Deviation: fmt.Sprintf("the bare form of a key is refused (%d)", b.Status)}
	case !ok(q):
		return KeyFormsFound{Forms: bare, Note: fmt.Sprintf("the quoted form was refused with %d", q.Status),
			Deviation: fmt.Sprintf("the quoted (RFC 8941) form of a key is refused (%d)", q.Status)}
	case counted && records == 1:
		return KeyFormsFound{Forms: both, Note: "the quoted and bare forms name the same key: one record"}
	case hasReplayMarker(q, b, ig):
		return KeyFormsFound{Forms: both, Note: "the quoted and bare forms name the same key: the second was answered as a replay"}
	case counted && records >= 2:
		return KeyFormsFound{Forms: bare, Note: fmt.Sprintf("the quoted and bare forms of one key are two different keys (%d records): "+
			"the API reads the header verbatim, so only the bare form is the key", records),
			Deviation: "quoted and bare forms are distinct keys (the draft expects one key)"}
	case !counted && SameAnswer(q, b, ig):
		return KeyFormsFound{Forms: both, Note: "the quoted and bare forms name the same key: the second got the first's answer (no observer to count records)"}
	}
	return KeyFormsFound{Forms: bare, Note: fmt.Sprintf("nothing shows that the quoted and bare forms name one key (answers differ at %s, no record count): "+
		"only the bare form is suggested", strings.Join(AnswerDifferences(q, b, ig), ", ")),
		Deviation: "nothing shows that the quoted and bare forms are one key (the draft expects one key)"}
}

// hasReplayMarker reports whether b carries a replay marker that a lacked.
func hasReplayMarker(a, b history.Attempt, ig targets.Ignore) bool {
	marker, _ := ReplayMarker(a, b, ig)
	return marker != ""
}
