package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports/shardfile"
	"github.com/retrysafe/retrysafe/suites/bench"
)

// BenchmarkMerge merges a synthetic set of $RETRYSAFE_MERGE_ATTEMPTS attempts (default 200,000)
// in 4 shards, in-process, against the floor of reading the set once: it reports the time per
// merged attempt and the ratio to the read. `retrysafe bench --only 5` measures the same merge in
// a child process, with its peak RSS, at 10 million attempts. With $RETRYSAFE_MERGE_SET (a set
// `retrysafe bench --write-shard-set DIR` wrote) it merges that set instead, e.g. to profile a
// large merge without writing the set each time.
func BenchmarkMerge(b *testing.B) {
	n := int64(200_000)
	if v, err := strconv.ParseInt(os.Getenv("RETRYSAFE_MERGE_ATTEMPTS"), 10, 64); err == nil && v > 0 {
		n = v
	}
	dir := os.Getenv("RETRYSAFE_MERGE_SET")
	set := &bench.ShardSet{Dir: dir, Target: filepath.Join(dir, "target.yaml")}
	if dir == "" {
		dir = b.TempDir()
		var err error
		if set, err = bench.WriteShardSet(b.Context(), dir, 4, n, bench.ShardSetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), ReadHeaderTimeout: time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	b.Setenv("RETRYSAFE_URL", "http://"+ln.Addr().String())
	files, err := shardfile.Find([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	started := time.Now()
	attempts, err := bench.ReadSetOnce(files)
	if err != nil {
		b.Fatal(err)
	}
	read := time.Since(started)
	b.ResetTimer()
	for range b.N {
		var out bytes.Buffer
		root := newRoot()
		root.SetArgs([]string{"merge", "--target", set.Target, "--report-dir", filepath.Join(dir, "report"), "--no-cleanup", dir})
		root.SetOut(&out)
		root.SetErr(&out)
		if err := root.Execute(); err != nil {
			b.Fatalf("merge: %v\n%s", err, out.String())
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(per.Nanoseconds())/float64(max(attempts, 1)), "ns/attempt")
	b.ReportMetric(per.Seconds()/read.Seconds(), "x-read")
}
