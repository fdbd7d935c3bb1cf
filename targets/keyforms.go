package targets

import "slices"

// KeyFormsToAsk reports whether the key forms in force are the harness's default rather than a
// declaration (the file writes neither profile.key_forms nor any operations[].key.form) and
// include the quoted form, whose equivalence to the bare one real APIs often do not share: the
// run then asks the API first (framework: the key forms settled before a run).
func (t *Target) KeyFormsToAsk() bool {
	if t.Profile.formsDeclared || !slices.Contains(t.Profile.KeyForms, KeyQuoted) {
		return false
	}
	for _, op := range t.Operations {
		if op.Key.formDeclared {
			return false
		}
	}
	return true
}

// UseKeyForms makes forms (one or more, the default first) the key forms in force: the
// profile's, and those of every operation whose key travels in a header. A run calls it once,
// before any spec, when it found the API's key forms unlike the default.
func (t *Target) UseKeyForms(forms []KeyForm) {
	if len(forms) == 0 {
		return
	}
	t.Profile.KeyForms = slices.Clone(forms)
	for _, op := range t.Operations {
		if op.Key.In == KeyInHeader {
			op.Key.Form = forms[0]
			op.forms = slices.Clone(forms)
		}
	}
}
