package probe

import "github.com/retrysafe/retrysafe/reports/profile"

// The SHOULDs of the IETF draft (draft-ietf-httpapi-idempotency-key-header, its first table),
// as the values a probed field takes when it follows them, and what the draft says in words.
// A value that differs is a deviation: the API's choice, to be declared in its target file, not
// a bug (that is Unsafe).
var draftShoulds = []struct {
	field   string
	follows func(value string) bool
	says    string
}{
	{profile.FieldMissingKeyStatus, is("400"), "the draft says 400 for a request without a key"},
	{profile.FieldMismatchStatus, is("422"), "the draft says 422 for a reused key with another payload"},
	{profile.FieldInFlight, is("409"), "the draft says 409 for a retry while the first attempt is still in flight"},
	{profile.FieldReplay, is("same"), "the draft says a retry after the first attempt completed gets the original result replayed"},
	{profile.FieldErrorPolicy, is("replay"), "the draft says a retry after the first attempt completed gets the original result replayed, an error included"},
}

// is returns a test for one value.
func is(want string) func(string) bool { return func(v string) bool { return v == want } }

// markDeviations gives each probed field whose value contradicts a SHOULD of the draft its
// Deviation (a field that already carries one, with more detail, keeps it).
func markDeviations(fields []profile.Field) {
	for i := range fields {
		f := &fields[i]
		if !f.Probed() || f.Deviation != "" {
			continue
		}
		for _, s := range draftShoulds {
			if s.field == f.Name && !s.follows(f.Value) {
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
