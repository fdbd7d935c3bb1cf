package targets

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExpandEnv checks ${NAME} expansion: it never panics, leaves text without ${ alone,
// undoes the $${ escape exactly, expands a name and a default to their values, and never
// expands a value a second time.
func FuzzExpandEnv(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "${A:-d}", "$${A}", "$$${A}", "${", "${A", "${}", "${1A}", "${A:-}",
		"$.count", "$1", "a${A}b${B:-x}c", "${A:-${B}}", "${A:-a}b}", "$${$${"} {
		f.Add(s, "v", "NAME")
	}
	f.Fuzz(func(t *testing.T, s, val, name string) {
		always := func(string) (string, bool) { return val, true }
		none := func(string) (string, bool) { return "", false }
		out, errs, unset := expandEnv(s, always, false)
		if !strings.Contains(s, "${") && (out != s || errs != nil || unset != nil) {
			t.Fatalf("expandEnv(%q) = %q, %v, %v; want it unchanged", s, out, errs, unset)
		}
		escaped := strings.ReplaceAll(s, "${", "$${")
		if out, errs, unset := expandEnv(escaped, none, false); out != s || errs != nil || unset != nil {
			t.Fatalf("expandEnv(%q) = %q, %v, %v; want %q", escaped, out, errs, unset, s)
		}
		if !validEnvName(name) {
			return
		}
		if out, errs, unset := expandEnv("<${"+name+"}>", always, false); out != "<"+val+">" || errs != nil || unset != nil {
			t.Fatalf("${%s} with value %q expands to %q, %v, %v", name, val, out, errs, unset)
		}
		def := strings.ReplaceAll(val, "}", "")
		if out, errs, unset := expandEnv("<${"+name+":-"+def+"}>", none, false); out != "<"+def+">" || errs != nil || unset != nil {
			t.Fatalf("${%s:-%s} unset expands to %q, %v, %v", name, def, out, errs, unset)
		}
		if _, errs, unset := expandEnv("${"+name+"}", none, false); errs != nil || len(unset) != 1 || unset[0] != name {
			t.Fatalf("unset ${%s}: errors %v, unset %v, want it named unset", name, errs, unset)
		}
		if out, _, _ := expandEnv("<${"+name+"}>", none, true); out != "<<"+name+">>" {
			t.Fatalf("unset ${%s} with a stand-in expands to %q, want <%s> in its place", name, out, name)
		}
	})
}

// yamlSingleQuoted writes s as a YAML single-quoted scalar.
func yamlSingleQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// FuzzTemplate checks template rendering through the loader: a body, path and header
// template either loads or is refused (never both, never a panic); a loaded one renders the
// same bytes twice for the same values; text without {{ or ${ renders verbatim; and the json
// function writes any value as valid JSON that reads back as that value; and the fast path of
// simple templates renders exactly what text/template does.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{`{"ref": "{{.Ref}}"}`, `{"ref": {{json .Ref}}, "k": {{json .Key}}}`, "plain text", "",
		`{{if .Tenant}}{{.Tenant}}{{else}}none{{end}}`, `{{range .Ref}}{{end}}`, `{{printf "%s-%d" .Ref 3}}`,
		`{{.Nope}}`, `{{.Ref.X}}`, `{{`, `{{/* c */}}`, `{{template "x"}}`, `{{define "x"}}{{.Key}}{{end}}{{template "x" .}}`,
		`{{urlquery .Ref}}`, `{{index . "Ref"}}`, `{{len .Key}}`, `{{$x := .Ref}}{{$x}}`, `{{ .Ref | printf "%q" }}`} {
		f.Add(s, "rs-abc-0001", "rs-abc-key", "alice")
	}
	f.Fuzz(func(t *testing.T, body, ref, key, tenant string) {
		src := minimal + "    body: " + yamlSingleQuoted(body) + "\n    headers: {X-Ref: " + yamlSingleQuoted("{{.Tenant}}") + "}\n"
		tg, err := Parse("f.yaml", []byte(src), nil)
		if (tg == nil) == (err == nil) {
			t.Fatalf("Parse returned target %v and error %v", tg != nil, err)
		}
		vars := Vars{Ref: ref, Key: key, Tenant: tenant}
		if tg != nil {
			op := tg.Operations[0]
			if bt := op.req.body; bt != nil && bt.parts != nil { // the fast path, against text/template
				fast, ferr := bt.render(vars)
				slow, serr := bt.execute(vars)
				if fast != slow || (ferr == nil) != (serr == nil) {
					t.Fatalf("%q renders as %q, %v; text/template gives %q, %v", body, fast, ferr, slow, serr)
				}
			}
			_, b1, err1 := op.Build(BuildInput{Instance: &tg.Instances[0], Vars: vars})
			_, b2, err2 := op.Build(BuildInput{Instance: &tg.Instances[0], Vars: vars})
			if (err1 == nil) != (err2 == nil) || !bytes.Equal(b1, b2) {
				t.Fatalf("two renderings differ: %q, %v / %q, %v", b1, err1, b2, err2)
			}
			// A target file is UTF-8 text: YAML replaces invalid bytes, so only valid text must
			// come back unchanged.
			plain := utf8.ValidString(body) && !strings.Contains(body, "{{") && !strings.Contains(body, "${") &&
				!strings.ContainsAny(body, "\r\n\t")
			if plain && err1 == nil && string(b1) != body {
				t.Fatalf("plain body %q renders as %q", body, b1)
			}
		}
		jsonBody := minimal + `    body: '{"ref": {{json .Ref}}, "key": {{json .Key}}, "tenant": {{json .Tenant}}}'` + "\n"
		jt, err := Parse("j.yaml", []byte(jsonBody), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, b, err := jt.Operations[0].Build(BuildInput{Instance: &jt.Instances[0], Vars: vars, Key: KeyMode{Omit: true}})
		if err != nil {
			t.Fatalf("json body with %+v: %v", vars, err)
		}
		var got map[string]string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("json body %q is not JSON: %v", b, err)
		}
		valid := utf8.ValidString(ref) && utf8.ValidString(key) && utf8.ValidString(tenant) // else json writes U+FFFD
		if valid && (got["ref"] != ref || got["key"] != key || got["tenant"] != tenant) {
			t.Fatalf("json body %q reads back as %v, want %+v", b, got, vars)
		}
	})
}
