package targets

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docSection is one object section of docs/target-file.md: a ### heading that names one or more
// objects in backticks (or an "Objects:" line after it that does), and the fields its table
// rows name.
type docSection struct {
	line    int
	objects []string
	fields  []string
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	fieldRow   = regexp.MustCompile("^\\| `([a-z_]+)` \\|")
)

// readFieldDoc reads the object sections of docs/target-file.md.
func readFieldDoc(t *testing.T) []docSection {
	t.Helper()
	f, err := os.Open("../docs/target-file.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docSection
	var cur *docSection
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### "):
			out = append(out, docSection{line: n})
			cur = &out[len(out)-1]
			cur.objects = backtickedIn(line)
		case strings.HasPrefix(line, "#"):
			cur = nil
		case cur == nil:
		case strings.HasPrefix(line, "Objects: ") && len(cur.objects) == 0:
			cur.objects = backtickedIn(line)
		default:
			if m := fieldRow.FindStringSubmatch(line); m != nil {
				cur.fields = append(cur.fields, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range out {
		if len(s.objects) == 0 {
			t.Errorf("docs/target-file.md:%d: a ### section names no object (in its heading, or on an \"Objects:\" line after it)", s.line)
		}
	}
	return out
}

// backtickedIn returns the names written in backticks in a line.
func backtickedIn(line string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestTargetFileDocumentsEveryField fails when a field the loader accepts is missing from
// docs/target-file.md, and when the page documents a field or an object the loader does not
// accept: each ### section names its objects in backticks (as the registry does), in its heading
// or on an "Objects:" line, and its table's rows name their fields.
func TestTargetFileDocumentsEveryField(t *testing.T) {
	documented := map[string][]string{}
	for _, s := range readFieldDoc(t) {
		for _, obj := range s.objects {
			known, ok := registry[obj]
			if !ok {
				t.Errorf("docs/target-file.md:%d: names %s, which the loader has no object for (the registry is in targets/fields.go)", s.line, obj)
				continue
			}
			for _, f := range s.fields {
				if !slices.Contains(known, f) {
					t.Errorf("docs/target-file.md:%d: documents %s in %s, which the loader does not accept there", s.line, f, obj)
				}
			}
			documented[obj] = append(documented[obj], s.fields...)
		}
	}
	for _, obj := range registryKeys() {
		for _, f := range registry[obj] {
			if !slices.Contains(documented[obj], f) {
				t.Errorf("docs/target-file.md: %s (a field of %s) is not documented: add a row `%s` to a ### section that names `%s`", f, obj, f, obj)
			}
		}
	}
}
