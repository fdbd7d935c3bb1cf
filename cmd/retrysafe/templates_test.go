package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/retrysafe/retrysafe/suites/probe/probetest"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// ciTemplates are the CI templates, relative to the repository root.
var ciTemplates = []string{"ci/github-actions.yml", "ci/gitlab-ci.yml"}

// shellKeys are the YAML keys whose values are shell scripts: GitHub's run
// and GitLab's script, before_script and after_script.
var shellKeys = []string{"run", "script", "before_script", "after_script"}

// retrysafeCall finds a command line that runs retrysafe: at the start of a
// line, after a shell separator, or after nohup/exec/time.
var retrysafeCall = regexp.MustCompile(`(?:^|[;&|(]\s*|\b(?:nohup|exec|time)\s+)retrysafe\s+(.*)$`)

// templateCommands returns the arguments of every retrysafe command that a
// CI template runs, the program name left out.
func templateCommands(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var cmds [][]string
	for _, script := range shellScripts(doc, false) {
		script = strings.ReplaceAll(script, "\\\n", " ")
		for _, line := range strings.Split(script, "\n") {
			line = strings.TrimSpace(line)
			if m := retrysafeCall.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "#") {
				cmds = append(cmds, shellWords(m[1]))
			}
		}
	}
	return cmds
}

// shellScripts returns every string under a shellKeys key of a decoded YAML
// document (a script, or the lines of a script list).
func shellScripts(node any, shell bool) []string {
	var out []string
	switch n := node.(type) {
	case string:
		if shell {
			out = append(out, n)
		}
	case []any:
		for _, v := range n {
			out = append(out, shellScripts(v, shell)...)
		}
	case map[string]any:
		for k, v := range n {
			out = append(out, shellScripts(v, slices.Contains(shellKeys, k))...)
		}
	}
	return out
}

// shellWords splits the arguments of a simple shell command, honouring
// quotes, and stops at the first unquoted redirection or control operator.
func shellWords(s string) []string {
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
	flush := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case strings.ContainsRune("<>&|;#", r):
			if strings.Trim(word.String(), "0123456789") == "" { // the 2 of 2>&1
				word.Reset()
				inWord = false
			}
			flush()
			return words
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return words
}

// checkCommand reports a subcommand or flag of args that `retrysafe` lacks,
// or a flag value it would refuse.
func checkCommand(t *testing.T, file string, args []string) {
	t.Helper()
	line := "retrysafe " + strings.Join(args, " ")
	root := newRoot()
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root || len(args) == 0 || cmd.Name() != args[0] {
		t.Errorf("%s: %s: no such subcommand (%v)", file, line, err)
		return
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		found := cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil
		if !strings.HasPrefix(a, "--") {
			found = cmd.Flags().ShorthandLookup(name) != nil
		}
		if !found {
			t.Errorf("%s: %s: retrysafe %s has no flag %s", file, line, cmd.Name(), a)
		}
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: %s: %v", file, line, err)
	} else if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Errorf("%s: %s: %v", file, line, err)
	}
}

func TestTemplatesUseExistingCommands(t *testing.T) {
	for _, file := range ciTemplates {
		cmds := templateCommands(t, filepath.Join("..", "..", file))
		var subs []string
		for _, args := range cmds {
			checkCommand(t, file, args)
			subs = append(subs, args[0])
		}
		for _, want := range []string{"serve", "run"} {
			if !slices.Contains(subs, want) {
				t.Errorf("%s: no `retrysafe %s` found among %q", file, want, cmds)
			}
		}
	}
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"run --target a.yaml", []string{"run", "--target", "a.yaml"}},
		{`run --label-filter '!wait:retention' --focus "a b"`, []string{"run", "--label-filter", "!wait:retention", "--focus", "a b"}},
		{"serve --addr 127.0.0.1:8080 > serve.log 2>&1 &", []string{"serve", "--addr", "127.0.0.1:8080"}},
		{"serve --addr :0 2>err.log", []string{"serve", "--addr", ":0"}},
		{"run || true", []string{"run"}},
		{"run # a comment", []string{"run"}},
	}
	for _, tt := range tests {
		if got := shellWords(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("shellWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// runInProcess runs retrysafe in-process and returns its exit code and output.
func runInProcess(args []string) (int, string) {
	out, code, err := invoke(args...)
	if err != nil {
		out += "retrysafe: " + err.Error() + "\n"
	}
	return code, out
}

// TestTemplatesRunAgainstReference runs each distinct `retrysafe run` of
// the templates, as written but with its own --report-dir and without the
// expiry wait, against the reference API on the address in RETRYSAFE_URL.
func TestTemplatesRunAgainstReference(t *testing.T) {
	runs := map[string][]string{} // command line -> templates that run it
	for _, file := range ciTemplates {
		for _, args := range templateCommands(t, filepath.Join("..", "..", file)) {
			if args[0] == "run" {
				line := strings.Join(args, "\x00")
				runs[line] = append(runs[line], file)
			}
		}
	}
	if len(runs) == 0 {
		t.Fatal("no template runs `retrysafe run`")
	}
	// the reference API on 127.0.0.1; the templates run from the repository root
	t.Setenv("RETRYSAFE_URL", probetest.StartWithoutDownstream(t, reference.MutantNone).URL)
	t.Chdir(filepath.Join("..", ".."))

	for _, line := range slices.Sorted(maps.Keys(runs)) {
		args := strings.Split(line, "\x00")
		dir := t.TempDir()
		args = append(args, "--report-dir", dir) // the last --report-dir wins
		if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--label-filter") }) {
			args = append(args, "--label-filter", "!wait:retention")
		}
		code, out := runInProcess(args)
		if code != exitOK {
			t.Errorf("%v: retrysafe %s: exit %d, want 0; output:\n%s", runs[line], strings.Join(args, " "), code, out)
			continue
		}
		for _, name := range []string{"junit.xml", "report.json", "summary.md"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
				t.Errorf("%v: retrysafe %s wrote no %s (%v)", runs[line], strings.Join(args, " "), name, err)
			}
		}
		if summary, _ := os.ReadFile(filepath.Join(dir, "summary.md")); !bytes.HasPrefix(summary, []byte("## retrysafe: PASS")) {
			t.Errorf("%v: summary.md starts %.60q, want the PASS headline", runs[line], summary)
		}
	}
}
