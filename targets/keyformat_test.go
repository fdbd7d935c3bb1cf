package targets

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// keyFormatOf parses minimal with the given key line (and extra top-level lines) and returns the
// operation's key format, or the problems.
func keyFormatOf(t *testing.T, keyYAML, extra string) (KeyFormat, []string) {
	t.Helper()
	tg, probs := parseString(minimal+keyYAML+extra, nil)
	if probs != nil {
		return KeyFormat{}, probs
	}
	return tg.Operations[0].Key.Format, nil
}

func TestKeyFormatParse(t *testing.T) {
	cases := []struct {
		name, key, extra   string
		kind, text         string
		fixed              bool
		wantRun1, wantRun2 string // Make("rs-a", 1) and Make("rs-a", 2) when known exactly
	}{
		{"absent", "", "", KeyFormatDefault, "RUN-SEQ", false, "rs-a-0001", "rs-a-0002"},
		{"key without format", "    key: {in: header}\n", "", KeyFormatDefault, "RUN-SEQ", false, "rs-a-0001", "rs-a-0002"},
		{"uuid", "    key: {format: uuid}\n", "", KeyFormatUUID, "uuid", true, "", ""},
		{"uuid with spaces", "    key: {format: ' uuid '}\n", "", KeyFormatUUID, "uuid", true, "", ""},
		{"ulid", "    key: {format: ulid}\n", "", KeyFormatULID, "ulid", true, "", ""},
		{"uuid at the length limit", "    key: {format: uuid}\n", "profile: {max_key_length: 36}\n", KeyFormatUUID, "uuid", true, "", ""},
		{"ulid at the length limit", "    key: {format: ulid}\n", "profile: {max_key_length: 26}\n", KeyFormatULID, "ulid", true, "", ""},
		{"uuid without a limit", "    key: {format: uuid}\n", "profile: {max_key_length: none}\n", KeyFormatUUID, "uuid", true, "", ""},
		{"template", "    key: {format: \"order-{{.Run}}-{{.Seq}}\"}\n", "", KeyFormatTemplate, "order-{{.Run}}-{{.Seq}}", true,
			"order-rs-a-1", "order-rs-a-2"},
		{"template over seq alone", "    key: {format: \"k{{.Seq}}\"}\n", "", KeyFormatTemplate, "k{{.Seq}}", true, "k1", "k2"},
		{"template with a function", "    key: {format: '{{printf \"%s/%s\" .Run .Seq}}'}\n", "", KeyFormatTemplate,
			`{{printf "%s/%s" .Run .Seq}}`, true, "rs-a/1", "rs-a/2"},
		{"template with json", "    key: {format: '{{json .Seq}}'}\n", "", KeyFormatTemplate, "{{json .Seq}}", true, `"1"`, `"2"`},
		{"template in a query key", "    key: {in: query, name: token, format: \"t-{{.Seq}}\"}\n", "", KeyFormatTemplate, "t-{{.Seq}}", true, "t-1", "t-2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, probs := keyFormatOf(t, c.key, c.extra)
			if probs != nil {
				t.Fatalf("problems: %v", probs)
			}
			if f.Kind != c.kind || f.String() != c.text || f.Fixed() != c.fixed {
				t.Errorf("got kind %q, String %q, Fixed %v; want %q, %q, %v", f.Kind, f.String(), f.Fixed(), c.kind, c.text, c.fixed)
			}
			if c.wantRun1 == "" {
				return
			}
			if got1, got2 := f.Make("rs-a", 1), f.Make("rs-a", 2); got1 != c.wantRun1 || got2 != c.wantRun2 {
				t.Errorf("Make(rs-a, 1), Make(rs-a, 2) = %q, %q; want %q, %q", got1, got2, c.wantRun1, c.wantRun2)
			}
		})
	}
}

func TestKeyFormatMakeIsDeterministic(t *testing.T) {
	formats := map[string]string{
		"default":  "",
		"uuid":     "    key: {format: uuid}\n",
		"ulid":     "    key: {format: ulid}\n",
		"template": "    key: {format: \"{{.Run}}.{{.Seq}}\"}\n",
	}
	for name, key := range formats {
		t.Run(name, func(t *testing.T) {
			f, probs := keyFormatOf(t, key, "")
			if probs != nil {
				t.Fatal(probs)
			}
			// A second load of the same file stands for a later run with the same --key prefix.
			again, _ := keyFormatOf(t, key, "")
			seen := map[string]int64{}
			for seq := int64(0); seq < 500; seq++ {
				k := f.Make("rs-0123abcd", seq)
				if got := again.Make("rs-0123abcd", seq); got != k {
					t.Fatalf("seq %d: %q, then %q: the same run and seq must give the same key", seq, k, got)
				}
				if prev, dup := seen[k]; dup {
					t.Fatalf("seq %d and %d both give %q", prev, seq, k)
				}
				seen[k] = seq
			}
			if a, b := f.Make("rs-aaaa", 7), f.Make("rs-bbbb", 7); a == b {
				t.Errorf("runs rs-aaaa and rs-bbbb both give %q for seq 7", a)
			}
		})
	}
}

func TestKeyFormatUUIDKeysParse(t *testing.T) {
	f, probs := keyFormatOf(t, "    key: {format: uuid}\n", "")
	if probs != nil {
		t.Fatal(probs)
	}
	for _, seq := range []int64{0, 1, 2, 99, 1 << 40} {
		k := f.Make("rs-run", seq)
		u, err := uuid.Parse(k)
		if err != nil {
			t.Fatalf("seq %d: %q is not a UUID: %v", seq, k, err)
		}
		if got, want := u.String(), k; got != want || len(k) != 36 {
			t.Errorf("seq %d: %q is not in canonical form (%q)", seq, k, got)
		}
		if u.Version() != 5 || u.Variant() != uuid.RFC4122 {
			t.Errorf("seq %d: %q has version %d, variant %v; want a version-5 RFC 4122 UUID", seq, k, u.Version(), u.Variant())
		}
	}
}

func TestKeyFormatULIDKeysParse(t *testing.T) {
	f, probs := keyFormatOf(t, "    key: {format: ulid}\n", "")
	if probs != nil {
		t.Fatal(probs)
	}
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for seq := int64(0); seq < 200; seq++ {
		k := f.Make("rs-run", seq)
		u, err := ulid.ParseStrict(k)
		if err != nil {
			t.Fatalf("seq %d: %q is not a ULID: %v", seq, k, err)
		}
		if got := u.String(); got != k || len(k) != 26 {
			t.Errorf("seq %d: %q reads back as %q", seq, k, got)
		}
		if at := ulid.Time(u.Time()); at.Before(from) || !at.Before(to) {
			t.Errorf("seq %d: %q carries %v, want a time in 2026", seq, k, at)
		}
	}
}

func TestKeyFormatProblems(t *testing.T) {
	cases := []struct {
		name, key, extra string
		want             string // prefix of the one problem expected
	}{
		{"unknown format", "    key: {format: guid}\n", "",
			`t.yaml:5: operations[0].key.format: must be uuid, ulid or a template over {{.Run}} and {{.Seq}}, got "guid"`},
		{"format names are lower case", "    key: {format: UUID}\n", "",
			`t.yaml:5: operations[0].key.format: must be uuid, ulid or a template over {{.Run}} and {{.Seq}}, got "UUID"`},
		{"unknown format on its own line", "    key:\n      in: header\n      format: RUN-SEQ\n", "",
			`t.yaml:7: operations[0].key.format: must be uuid, ulid or a template`},
		{"template without seq", "    key: {format: \"{{.Run}}-fixed\"}\n", "",
			`t.yaml:5: operations[0].key.format: must use {{.Seq}}: every key of a run must differ (got "rs-0123abcd-fixed" twice)`},
		{"template without placeholders of either", "    key: {format: \"{{printf \\\"k\\\"}}\"}\n", "",
			`t.yaml:5: operations[0].key.format: must use {{.Seq}}`},
		{"unknown placeholder", "    key: {format: \"{{.Reff}}-{{.Seq}}\"}\n", "",
			`t.yaml:5: operations[0].key.format: unknown placeholder {{.Reff}} (known: .Run, .Seq)`},
		{"request placeholder", "    key: {format: \"{{.Key}}-{{.Seq}}\"}\n", "",
			`t.yaml:5: operations[0].key.format: unknown placeholder {{.Key}} (known: .Run, .Seq)`},
		{"misspelt seq", "    key: {format: \"{{.Run}}-{{.Sq}}\"}\n", "",
			`t.yaml:5: operations[0].key.format: unknown placeholder {{.Sq}} (known: .Run, .Seq); did you mean {{.Seq}}?`},
		{"nested placeholder", "    key: {format: \"{{.Seq.X}}\"}\n", "",
			`t.yaml:5: operations[0].key.format: unknown placeholder {{.Seq.X}}`},
		{"template syntax", "    key: {format: \"{{.Seq\"}\n", "",
			`t.yaml:5: operations[0].key.format: bad template:`},
		{"uuid longer than max_key_length", "    key: {format: uuid}\n", "profile: {max_key_length: 20}\n",
			`t.yaml:5: operations[0].key.format: gives keys of 36 characters, longer than profile.max_key_length 20: no key could be accepted`},
		{"ulid longer than max_key_length", "    key: {format: ulid}\n", "profile: {max_key_length: 25}\n",
			`t.yaml:5: operations[0].key.format: gives keys of 26 characters, longer than profile.max_key_length 25`},
		{"template longer than max_key_length", "    key: {format: \"order-{{.Run}}-{{.Seq}}\"}\n", "profile: {max_key_length: 10}\n",
			`t.yaml:5: operations[0].key.format: gives keys of 19 characters, longer than profile.max_key_length 10`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := keyFormatOf(t, c.key, c.extra)
			if len(probs) != 1 || !strings.HasPrefix(probs[0], c.want) {
				t.Errorf("got problems:\n  %s\nwant one starting with:\n  %s", strings.Join(probs, "\n  "), c.want)
			}
		})
	}
}

func TestKeyFormatTemplateMakesTheKeysItDeclares(t *testing.T) {
	cases := []struct {
		format string
		run    string
		seq    int64
		want   string
	}{
		{"{{.Run}}-{{.Seq}}", "rs-x", 0, "rs-x-0"},
		{"{{.Run}}-{{.Seq}}", "rs-x", 12345, "rs-x-12345"},
		{"pay_{{.Seq}}_{{.Run}}", "r", 3, "pay_3_r"},
		{"{{if .Seq}}s{{.Seq}}{{end}}", "r", 9, "s9"},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			f, probs := keyFormatOf(t, "    key: {format: "+yamlSingleQuoted(c.format)+"}\n", "")
			if probs != nil {
				t.Fatal(probs)
			}
			if got := f.Make(c.run, c.seq); got != c.want {
				t.Errorf("Make(%q, %d) = %q, want %q", c.run, c.seq, got, c.want)
			}
		})
	}
}

func TestKeyFormatsOfOperationsAreIndependent(t *testing.T) {
	src := "instances: [http://127.0.0.1:1]\noperations:\n" +
		"  - {name: a, path: /a, key: {format: uuid}}\n" +
		"  - {name: b, path: /b}\n" +
		"  - {name: c, path: /c, key: {format: 'c-{{.Seq}}'}}\n"
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatal(probs)
	}
	var got []string
	for _, op := range tg.Operations {
		got = append(got, op.Key.Format.String())
	}
	if want := []string{"uuid", "RUN-SEQ", "c-{{.Seq}}"}; !slices.Equal(got, want) {
		t.Errorf("formats = %v, want %v", got, want)
	}
}
