package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// shardBench is benchmark 5, the figures of a sharded load: (a) the CPU time per request of one
// shard of four (its share of the plan with cross-shard twins, every attempt recorded, the shard
// file written) against the bare Vegeta attack, both at unlimited rate on the in-process
// reference API; (b) `retrysafe merge` of a synthetic set of MergeAttempts attempts in four
// shards (counted by one bulk query on MergeStore), in a child process: its wall time, CPU time
// and peak RSS, against the floor of reading the same files once.
func shardBench(ctx context.Context, o *Options) error {
	w := o.Out
	fmt.Fprintf(w, "5. Sharded load: (a) CPU per request of shard 0 of 4 vs the bare Vegeta attack (unlimited rate, %s,\n"+
		"   reference API in-process on the memory store, no work delay); (b) retrysafe merge of a synthetic\n"+
		"   set of %d attempts in 4 shards vs reading the set once.\n", o.LoadDuration, o.MergeAttempts)
	s, err := startServer(ctx, "memory", reference.MutantNone, 0, o.PostgresDSN)
	if err != nil {
		return err
	}
	defer s.close()
	runtime.GC()
	bare := measure(func() int { return bareAttack(s, bareWorkers(o.LoadWorkers), o.LoadDuration, 5) })
	out, err := os.MkdirTemp("", "retrysafe-bench-shard-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	st := framework.Settings{LoadWorkers: o.LoadWorkers, Seed: 5, RunID: fmt.Sprintf("b%x", time.Now().UnixNano()&0xffffff),
		LoadDuration: o.LoadDuration, Shard: &framework.Shard{I: 0, N: 4, Twins: 0.1}}
	h, err := framework.Open(ctx, s.target, framework.WithSettings(st), framework.WithoutCleanup())
	if err != nil {
		return err
	}
	runtime.GC()
	var m *shardfile.Manifest
	shard := measure(func() int {
		var err2 error
		_, m, err2 = h.RunShard(ctx, framework.ShardOptions{StartAt: time.Now(), Skew: time.Minute, Out: out, Unlimited: true})
		if err2 != nil {
			err = err2
			return 0
		}
		return int(m.Attempts)
	})
	h.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   %-22s %10s %12s %12s\n", "", "requests", "per second", "CPU/request")
	fmt.Fprintf(w, "   %-22s %10d %12.0f %12s\n", "bare Vegeta", bare.n, rateOf(bare), us(cpuOf(bare)))
	fmt.Fprintf(w, "   %-22s %10d %12.0f %12s   CPU ratio shard/bare %.2f\n", "shard 0 of 4", shard.n, rateOf(shard), us(cpuOf(shard)),
		ratioOf(cpuOf(shard), cpuOf(bare)))
	fmt.Fprintf(w, "   (both include the in-process API's CPU; the shard's share: %d hits, %s)\n", m.Hits, m.Figures["statuses"])
	return mergeBench(ctx, o)
}

// ReadSetOnce reads every operation row and attempt of a set once, as a merge does, and judges
// nothing: the floor a merge's time is compared with. It returns the attempts read.
func ReadSetOnce(files []*shardfile.File) (int, error) {
	n := 0
	for _, f := range files {
		from, err := f.Operations(func(int64, *shardfile.Row) error { return nil })
		if err == nil {
			err = f.Attempts(from, func(*shardfile.Compact) bool { n++; return true })
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// mergeBench is part (b) of benchmark 5.
func mergeBench(ctx context.Context, o *Options) error {
	w := o.Out
	dir, err := os.MkdirTemp("", "retrysafe-bench-merge-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	started := time.Now()
	so := ShardSetOptions{}
	if o.MergeStore == "postgres" {
		so.PostgresDSN = o.PostgresDSN
	}
	set, err := WriteShardSet(ctx, dir, 4, o.MergeAttempts, so)
	if err != nil {
		return fmt.Errorf("write the shard set: %w", err)
	}
	defer set.Close()
	var size int64
	files, err := shardfile.Find([]string{dir})
	if err != nil {
		return err
	}
	for _, f := range files {
		if fi, err := os.Stat(f.Path); err == nil {
			size += fi.Size()
		}
	}
	fmt.Fprintf(w, "   the set: %d attempts of %d operations in 4 files, %.0f MB, its records in %s, written in %s\n",
		set.Attempts, set.Operations, float64(size)/1e6, set.Store, time.Since(started).Round(time.Millisecond))
	syscall.Sync() // the set on disk before anything is timed: no write-back competes with the merge
	runtime.GC()
	scan := measure(func() int {
		n, _ := ReadSetOnce(files)
		return n
	})
	fmt.Fprintf(w, "   %-22s %10s %10s %10s %12s\n", "", "wall", "CPU", "peak RSS", "per attempt")
	fmt.Fprintf(w, "   %-22s %10s %10s %10s %12s\n", "read the set once", scan.wall.Round(time.Millisecond), scan.cpu.Round(time.Millisecond), "-",
		fmt.Sprintf("%.2fµs", scan.wall.Seconds()*1e6/float64(max(scan.n, 1))))
	if o.Self == "" {
		fmt.Fprintf(w, "   retrysafe merge: not measured (no retrysafe binary given: run `retrysafe bench --only 5`)\n\n")
		return nil
	}
	wall, cpu, rss, figures, err := runMerge(ctx, o.Self, set)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   %-22s %10s %10s %10s %12s   %.1f× the read; goal under 10 s and 2 GiB: %s\n", "retrysafe merge",
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), fmt.Sprintf("%.0f MB", float64(rss)/1e6),
		fmt.Sprintf("%.2fµs", wall.Seconds()*1e6/float64(max(set.Attempts, 1))), wall.Seconds()/scan.wall.Seconds(),
		verdict(wall < 10*time.Second && rss < 2<<30))
	fmt.Fprintf(w, "   of it: counting %s (%s), checking %s; CPU per merged attempt %.2fµs\n\n", figures["count_time"], figures["counted_by"],
		figures["check_time"], cpu.Seconds()*1e6/float64(max(set.Attempts, 1)))
	return nil
}

// runMerge runs `retrysafe merge` on a set in a child process (its instance a stub that answers
// the reachability check) and returns its wall time, CPU time, peak RSS and load figures.
func runMerge(ctx context.Context, self string, set *ShardSet) (wall, cpu time.Duration, rss int64, figures map[string]string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, 0, nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	report := filepath.Join(set.Dir, "report")
	cmd := exec.CommandContext(ctx, self, "merge", "--target", set.Target, "--report-dir", report, "--no-cleanup", set.Dir)
	cmd.Env = append(os.Environ(), "RETRYSAFE_URL=http://"+ln.Addr().String())
	started := time.Now()
	out, err := cmd.CombinedOutput()
	wall = time.Since(started)
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("retrysafe merge of the synthetic set: %v\n%s", err, out)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	data, err := os.ReadFile(filepath.Join(report, "report.json"))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	var r struct {
		Properties []struct {
			Name    string            `json:"name"`
			Figures map[string]string `json:"figures"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, 0, 0, nil, err
	}
	for _, p := range r.Properties {
		if p.Name == framework.LoadProperty {
			figures = p.Figures
		}
	}
	return wall, cpu, rss, figures, nil
}
