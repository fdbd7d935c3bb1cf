package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// sideGuides are the guides of the sides: the label of a property that `retrysafe list` prints
// says which one documents it (the events label before the side: the API's events have theirs).
var sideGuides = []struct{ label, guide string }{
	{"events", "docs/events.md"},
	{"side:api", "docs/api.md"},
	{"side:consumer", "docs/consumers.md"},
	{"side:client", "docs/clients.md"},
	{"side:chain", "docs/chain.md"},
}

// listedProperties parses `retrysafe list`: each property's name and labels.
func listedProperties(t *testing.T) map[string][]string {
	t.Helper()
	res := execCLI(t, "list")
	if res.code != exitOK {
		t.Fatalf("list: exit %d:\n%s", res.code, res.out)
	}
	out := map[string][]string{}
	name := ""
	for _, line := range strings.Split(res.out, "\n") {
		switch {
		case line != "" && !strings.HasPrefix(line, " "):
			name = strings.TrimSpace(line)
			out[name] = nil
		case strings.HasPrefix(line, "  labels:"):
			for _, l := range strings.Split(strings.TrimPrefix(line, "  labels:"), ",") {
				out[name] = append(out[name], strings.TrimSpace(l))
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("list printed %d properties:\n%s", len(out), res.out)
	}
	return out
}

// TestGuidesDocumentEveryProperty fails when a property `retrysafe list` prints is missing from
// its side's guide (a row of a table whose first cell is the property's name), and when a guide
// does not lead to `retrysafe explain` for the kinds.
func TestGuidesDocumentEveryProperty(t *testing.T) {
	for name, labels := range listedProperties(t) {
		guide := ""
		for _, g := range sideGuides {
			if slices.Contains(labels, g.label) {
				guide = g.guide
				break
			}
		}
		if guide == "" {
			t.Errorf("property %s has no side label with a guide (labels: %s)", name, strings.Join(labels, ", "))
			continue
		}
		doc := readRepoFile(t, guide)
		if !strings.Contains(doc, "\n| `"+name+"` |") {
			t.Errorf("%s: property %s (%s) is not documented: add a row | `%s` | to its properties table", guide, name, strings.Join(labels, ", "), name)
		}
	}
	for _, g := range sideGuides {
		if doc := readRepoFile(t, g.guide); !strings.Contains(doc, "`retrysafe explain KIND`") {
			t.Errorf("%s does not lead to `retrysafe explain KIND` for what a kind means", g.guide)
		}
	}
}

// readRepoFile reads a file of the repository, from the package's folder.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```")
)

// slugs returns the anchors GitHub gives a Markdown file's headings.
func slugs(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(doc, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				b.WriteRune(r)
			}
		}
		s := b.String()
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestDocsLinksResolve fails when a relative link of the README or of docs/ names a file that
// does not exist, or an anchor that no heading of its file gives.
func TestDocsLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := mdFence.ReplaceAllString(string(data), "")
		for _, m := range mdLink.FindAllStringSubmatch(doc, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(link, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %s: %v", f, link, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			body, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s: link %s: %v", f, link, err)
				continue
			}
			if !slugs(string(body))[anchor] {
				t.Errorf("%s: link %s: no heading of %s gives the anchor #%s", f, link, target, anchor)
			}
		}
	}
}

func TestSlugs(t *testing.T) {
	got := slugs("# The API side\n## From `go test`\n### `operations[].key`\n### A request: `hooks.fail_next`, `cleanup`\n## From `go test`\n```\n# not a heading\n```\n")
	for _, want := range []string{"the-api-side", "from-go-test", "operationskey", "a-request-hooksfail_next-cleanup", "from-go-test-1"} {
		if !got[want] {
			t.Errorf("slugs: no %s in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("slugs: a fenced line is a heading: %v", got)
	}
}
