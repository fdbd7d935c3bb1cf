package probe

import "github.com/retrysafe/retrysafe/reports/profile"

// The SHOULDs of the IETF draft (draft-ietf-httpapi-idempotency-key-header, its first table),
// as the values a probed field takes when it follows them, and what the draft says in words.
// A value that differs is a deviation: the API's choice, to be declared in its target file, not
// a bug (that is Unsafe).
var draftShoulds = []struct {
	field, value, says string
}{
	{profile.FieldMissingKeyStatus, "400", "the draft says 400 for a request without a key"},
	{profile.FieldMismatchStatus, "422", "the draft says 422 for a reused key with another payload"},
	{profile.FieldInFlight, "409", "the draft says 409 for a retry while the first attempt is still in flight"},
	{profile.FieldReplay, "same", "the draft says a retry after the first attempt completed gets the original result replayed"},
	{profile.FieldErrorPolicy, "replay", "the draft says a retry after the first attempt completed gets the original result replayed, an error included"},
}

// markDeviations gives each probed field whose value contradicts a SHOULD of the draft its
// Deviation (a field that already carries one, with more detail, keeps it).
func markDeviations(fields []profile.Field) {
	for i := range fields {
		f := &fields[i]
		if !f.Probed() || f.Deviation != "" {
			continue
		}
		for _, s := range draftShoulds {
			if s.field == f.Name && f.Value != s.value {
				f.Deviation = s.says
			}
		}
	}
}

// clearDeviations drops the deviations set while probing, for a base other than ietf.
func clearDeviations(fields []profile.Field) {
	for i := range fields {
		fields[i].Deviation = ""
	}
}
