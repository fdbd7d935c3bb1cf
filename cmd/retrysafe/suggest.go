package main

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// nearest returns up to n of known closest to name, closest first. A name's distance to a known
// one is the least of their edit distance and that to its prefix of name's length (plus one),
// so that a truncated or misspelt start finds the whole name. With near set only names within
// a third of name's length (at least 2) are returned; else the n closest, however far.
func nearest(name string, known []string, n int, near bool) []string {
	name = strings.ToLower(name)
	type cand struct {
		s string
		d int
	}
	var cs []cand
	for _, k := range known {
		lk := strings.ToLower(k)
		d := targets.EditDistance(name, lk)
		if len(lk) > len(name) && len(name) >= 3 {
			d = min(d, targets.EditDistance(name, lk[:len(name)])+1)
		}
		if !near || d <= max(2, len(name)/3) {
			cs = append(cs, cand{k, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.s)
	}
	return out
}

// unknownFlag matches pflag's message for a flag a command does not have.
var unknownFlag = regexp.MustCompile(`^unknown flag: --(\S+)$`)

// suggestFlag is every command's flag error function: an unknown flag is answered with the
// nearest flags of the command ("unknown flag: --taget (did you mean --target?)"), other flag
// errors with a pointer to the command's help.
func suggestFlag(cmd *cobra.Command, err error) error {
	help := fmt.Sprintf("see '%s --help'", cmd.CommandPath())
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return usageErr("%v (%s)", err, help)
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	near := nearest(m[1], names, 3, true)
	if len(near) == 0 {
		return usageErr("%v (%s)", err, help)
	}
	for i, n := range near {
		near[i] = "--" + n
	}
	return usageErr("%v (did you mean %s?)", err, strings.Join(near, " or "))
}
