package shardfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MinOverlap is the least share of the set's window that every shard's window must cover
// together: shards that did not run at the same time did not load the target together.
const MinOverlap = 0.8

// Find opens every shard file (complete or partial) in dirs.
func Find(dirs []string) ([]*File, error) {
	var files []*File
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, en := range entries {
			name := en.Name()
			if en.IsDir() || !(strings.HasSuffix(name, Ext) || strings.HasSuffix(name, Ext+".partial")) {
				continue
			}
			f, err := Open(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// CheckSet checks that files are one complete set of one run of one target: run (empty: the run
// of the first complete file) and the target file's SHA-256. It returns the set ordered by shard,
// or the problems, each naming the shard or file: a shard missing, one that did not finish (a
// partial file, no manifest) or did not send its share, one present twice (a retried pod), a file
// of another run, shard count or target, windows that overlap less than MinOverlap.
func CheckSet(files []*File, run, targetSHA256 string) ([]*File, []string) {
	var problems []string
	if run == "" {
		runs := map[string][]*File{}
		var names []string
		for _, f := range files {
			if runs[f.Header.Run] == nil {
				names = append(names, f.Header.Run)
			}
			runs[f.Header.Run] = append(runs[f.Header.Run], f)
		}
		if len(names) > 1 {
			slices.Sort(names)
			var each []string
			for _, r := range names {
				each = append(each, fmt.Sprintf("run %q: %s", r, paths(runs[r])))
			}
			return nil, []string{"the files hold shards of several runs (" + strings.Join(each, "; ") + "): name the one to merge with --run"}
		}
		if len(names) == 1 {
			run = names[0]
		}
	}
	if len(files) == 0 || run == "" {
		return nil, []string{"no complete shard file found"}
	}
	n := 0
	var mine []*File
	for _, f := range files {
		switch {
		case f.Header.Run != run:
			problems = append(problems, fmt.Sprintf("%s is shard %d of run %q, not of run %q", f.Path, f.Header.Shard, f.Header.Run, run))
		case f.Manifest != nil && f.Manifest.TargetSHA256 != targetSHA256:
			problems = append(problems, fmt.Sprintf("%s (shard %d) was run against another target file (SHA-256 %.12s…, this one %.12s…)",
				f.Path, f.Header.Shard, f.Manifest.TargetSHA256, targetSHA256))
		default:
			mine = append(mine, f)
			if n == 0 {
				n = f.Header.Shards
			}
		}
	}
	byShard := map[int][]*File{}
	for _, f := range mine {
		if f.Header.Shards != n {
			problems = append(problems, fmt.Sprintf("%s is shard %d of %d, the others are of %d", f.Path, f.Header.Shard, f.Header.Shards, n))
			continue
		}
		byShard[f.Header.Shard] = append(byShard[f.Header.Shard], f)
	}
	set := make([]*File, 0, n)
	for i := range n {
		var done, partial []*File
		for _, f := range byShard[i] {
			if f.Manifest != nil && !f.Partial {
				done = append(done, f)
			} else {
				partial = append(partial, f)
			}
		}
		switch {
		case len(done) > 1:
			problems = append(problems, fmt.Sprintf("shard %d of %d appears %d times (%s): a retried pod or job? Keep one", i, n, len(done), paths(done)))
		case len(done) == 1 && !done[0].Manifest.Complete:
			problems = append(problems, fmt.Sprintf("shard %d of %d did not send its share: %s", i, n, done[0].Manifest.Incomplete))
		case len(done) == 1:
			set = append(set, done[0])
		case len(partial) > 0:
			problems = append(problems, fmt.Sprintf("shard %d of %d did not finish: only %s, without a manifest (the shard died or is still running)", i, n, paths(partial)))
		default:
			problems = append(problems, fmt.Sprintf("shard %d of %d is missing", i, n))
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	if share := Overlap(set); share < MinOverlap {
		return nil, []string{fmt.Sprintf("the shards' windows overlap %.0f%% of the run's window, less than %.0f%%: they did not load the target together (%s)",
			100*share, 100*MinOverlap, windows(set))}
	}
	return set, nil
}

// Overlap is the share of the set's whole window (first start to last end) during which every
// shard was sending.
func Overlap(set []*File) float64 {
	var first, last, latestStart, earliestEnd time.Time
	for i, f := range set {
		m := f.Manifest
		if i == 0 || m.Start.Before(first) {
			first = m.Start
		}
		if i == 0 || m.End.After(last) {
			last = m.End
		}
		if i == 0 || m.Start.After(latestStart) {
			latestStart = m.Start
		}
		if i == 0 || m.End.Before(earliestEnd) {
			earliestEnd = m.End
		}
	}
	whole := last.Sub(first)
	if whole <= 0 {
		return 1
	}
	return max(0, float64(earliestEnd.Sub(latestStart))/float64(whole))
}

func paths(fs []*File) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func windows(set []*File) string {
	var out []string
	for _, f := range set {
		out = append(out, fmt.Sprintf("shard %d %s–%s", f.Header.Shard, f.Manifest.Start.UTC().Format("15:04:05.000"), f.Manifest.End.UTC().Format("15:04:05.000")))
	}
	return strings.Join(out, ", ")
}
