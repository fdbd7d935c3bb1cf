package shardtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var bin string // the retrysafe binary

func TestMain(m *testing.M) {
	bin = os.Getenv("RETRYSAFE_BIN")
	cleanup := func() {}
	if bin == "" {
		dir, err := os.MkdirTemp("", "retrysafe-shardtest-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cleanup = func() { os.RemoveAll(dir) }
		bin = filepath.Join(dir, "retrysafe")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/retrysafe/retrysafe/cmd/retrysafe").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build retrysafe: %v\n%s", err, out)
			os.Exit(2)
		}
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// target is the reference API's example target file; bulkTarget the same with bulk observers (one
// SQL query counts every record of the run).
var (
	target, _     = filepath.Abs("../../../targets/examples/reference.yaml")
	bulkTarget, _ = filepath.Abs("testdata/reference-bulk.yaml")
)

// serve starts a reference API instance on PostgreSQL (args: its mode) and returns its URL; it
// is stopped when the test ends.
func serve(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--store", "postgres", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string // what it printed, shown when the test fails
	read := make(chan struct{})
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		<-read
		if t.Failed() {
			mu.Lock()
			t.Logf("retrysafe serve %v printed:\n%s", args, strings.Join(lines, "\n"))
			mu.Unlock()
		}
	})
	url := make(chan string, 1)
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			if lines = append(lines, sc.Text()); len(lines) > 40 {
				lines = lines[1:]
			}
			mu.Unlock()
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				url <- u
			}
		}
	}()
	select {
	case u := <-url:
		return u
	case <-time.After(20 * time.Second):
		t.Fatalf("retrysafe serve %v did not listen within 20 s", args)
		return ""
	}
}

// shard is one shard process.
type shard struct {
	i   int
	cmd *exec.Cmd
	out strings.Builder
}

// startShards starts n shard processes of run against urls, their load due in lead.
func startShards(t *testing.T, target, run string, n int, out string, urls []string, lead time.Duration, extra ...string) []*shard {
	t.Helper()
	at := time.Now().Add(lead).UTC().Format(time.RFC3339)
	var shards []*shard
	for i := range n {
		s := &shard{i: i}
		args := append([]string{"run", "--target", target, "--shard", fmt.Sprintf("%d/%d", i, n), "--run", run,
			"--start-at", at, "--out", out, "--load-rate", "40", "--load-duration", "2s", "--load-twins", "0.2"}, extra...)
		s.cmd = exec.Command(bin, args...)
		s.cmd.Env = append(os.Environ(), "RETRYSAFE_URL="+strings.Join(urls, ","))
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if s.cmd.ProcessState == nil {
				syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				s.cmd.Wait()
			}
		})
		shards = append(shards, s)
	}
	return shards
}

// wait waits for a shard and returns its exit code.
func (s *shard) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("shard %d: %v", s.i, err)
		}
		return 0
	case <-time.After(60 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("shard %d did not end within 60 s:\n%s", s.i, s.out.String())
		return -1
	}
}

// merge runs retrysafe merge and returns its exit code and output.
func merge(t *testing.T, target, report string, urls []string, dirs ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"merge", "--target", target, "--report-dir", report}, dirs...)...)
	cmd.Env = append(os.Environ(), "RETRYSAFE_URL="+strings.Join(urls, ","))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	case err != nil:
		t.Fatalf("merge: %v\n%s", err, out)
	}
	return 0, string(out)
}

// runShards runs 4 shards to their end; every one must exit 0.
func runShards(t *testing.T, target, run, out string, urls []string) {
	t.Helper()
	for _, s := range startShards(t, target, run, 4, out, urls, 3*time.Second) {
		if code := s.wait(t); code != 0 {
			t.Fatalf("shard %d exited %d:\n%s", s.i, code, s.out.String())
		}
	}
}

func runID(t *testing.T) string { return fmt.Sprintf("st%x", time.Now().UnixNano()&0xffffffff) }

func TestShardsOfTheCorrectReferencePass(t *testing.T) {
	t.Parallel() // each test has its own instances, run ids and folders
	urls := []string{serve(t), serve(t)}
	dir := t.TempDir()
	out := filepath.Join(dir, "shards")
	runShards(t, bulkTarget, runID(t), out, urls)
	code, text := merge(t, bulkTarget, filepath.Join(dir, "report"), urls, out)
	if code != 0 {
		t.Fatalf("merge of the correct reference exited %d:\n%s", code, text)
	}
	var r report
	r.read(t, filepath.Join(dir, "report", "report.json"))
	load := r.property("load")
	if load.Verdict != "pass" || load.Figures["shards"] != "4" || load.Figures["cross_shard_twins"] == "0" ||
		!strings.Contains(load.Figures["counted_by"], "orders: one bulk query") {
		t.Fatalf("load %+v", load)
	}
	for i := range 4 {
		if load.Figures[fmt.Sprintf("shard_%d", i)] == "" {
			t.Fatalf("no throughput of shard %d in %v", i, load.Figures)
		}
	}
	if p := r.property("replay"); p.Verdict != "skipped" || !strings.Contains(p.Reason, "merge") {
		t.Fatalf("replay: %+v, want skipped by merge", p)
	}
	if _, err := os.Stat(filepath.Join(dir, "report", "load-latency.html")); err != nil {
		t.Fatalf("no load plot: %v", err)
	}
}

// TestTheRaceMutantFailsOnlyMerged: with the race mutant, a cross-shard twin executes twice, which
// only the merged history shows; no shard reports a problem (each exits 0).
func TestTheRaceMutantFailsOnlyMerged(t *testing.T) {
	t.Parallel() // each test has its own instances, run ids and folders
	urls := []string{serve(t, "--mutant", "race", "--work-delay", "50ms"), serve(t, "--mutant", "race", "--work-delay", "50ms")}
	dir := t.TempDir()
	out := filepath.Join(dir, "shards")
	runShards(t, bulkTarget, runID(t), out, urls)
	code, text := merge(t, bulkTarget, filepath.Join(dir, "report"), urls, out)
	if code != 1 {
		t.Fatalf("merge of the race mutant exited %d, want 1:\n%s", code, text)
	}
	var r report
	r.read(t, filepath.Join(dir, "report", "report.json"))
	cross := 0
	for _, sp := range r.property("load").Specs {
		for _, a := range sp.Anomalies {
			shards := map[int]bool{}
			for _, sa := range a.Shards {
				shards[sa.Shard] = true
			}
			if a.Kind == "duplicate-record" && len(shards) > 1 {
				cross++
			}
		}
	}
	if cross == 0 {
		t.Fatalf("no duplicate-record whose attempts come from two shards:\n%s", text)
	}
	t.Logf("%d duplicate records executed by two shards", cross)
}

func TestMergeRefusesAKilledShardAForeignOneAndADuplicate(t *testing.T) {
	t.Parallel() // each test has its own instances, run ids and folders
	urls := []string{serve(t), serve(t)}
	dir := t.TempDir()
	out := filepath.Join(dir, "shards")
	run := runID(t)
	shards := startShards(t, target, run, 4, out, urls, 2*time.Second, "--load-duration", "6s")
	time.Sleep(3500 * time.Millisecond) // the load started 1.5 s ago
	if err := shards[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, s := range shards {
		code := s.wait(t)
		if ws := s.cmd.ProcessState.Sys().(syscall.WaitStatus); s.i == 2 && ws.Signal() != syscall.SIGKILL {
			t.Fatalf("shard 2 was not killed: exit %d:\n%s", code, s.out.String())
		}
		if s.i != 2 && code != 0 {
			t.Fatalf("shard %d exited %d:\n%s", s.i, code, s.out.String())
		}
	}
	code, text := merge(t, target, filepath.Join(dir, "report"), urls, out)
	if code != 3 || !strings.Contains(text, "shard 2 of 4") {
		t.Fatalf("merge with shard 2 killed exited %d, want 3 naming shard 2:\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(out, "shard-2-of-4.rsshard")); !os.IsNotExist(err) {
		t.Fatalf("the killed shard left a complete file: %v", err)
	}

	// A shard that would start later than --start-at + --start-skew is refused: its window would
	// not be the others'.
	late := startShards(t, target, run+"late", 1, filepath.Join(dir, "late"), urls, -time.Minute)[0]
	if code := late.wait(t); code != 2 || !strings.Contains(late.out.String(), "too late to start") {
		t.Fatalf("a shard a minute late exited %d, want 2:\n%s", code, late.out.String())
	}

	// A complete set of another run next to this one's, and a retried pod's second file.
	other := filepath.Join(dir, "other")
	runShards(t, target, run+"x", other, urls)
	complete := filepath.Join(dir, "complete")
	os.MkdirAll(complete, 0o755)
	for i := range 4 {
		src := filepath.Join(other, fmt.Sprintf("shard-%d-of-4.rsshard", i))
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(complete, filepath.Base(src)), data, 0o644)
		if i == 1 {
			os.WriteFile(filepath.Join(out, "retried-"+filepath.Base(src)), data, 0o644) // another run's file among this run's
			dup := filepath.Join(dir, "dup")
			os.MkdirAll(dup, 0o755)
			os.WriteFile(filepath.Join(dup, filepath.Base(src)), data, 0o644)
		}
	}
	if code, text := merge(t, target, filepath.Join(dir, "r2"), urls, out); code != 3 || !strings.Contains(text, `run "`+run+`x": `+filepath.Join(out, "retried-shard-1-of-4.rsshard")) {
		t.Fatalf("merge of a set with another run's shard exited %d, want 3 naming it:\n%s", code, text)
	}
	if code, text := merge(t, target, filepath.Join(dir, "r3"), urls, complete, filepath.Join(dir, "dup")); code != 3 || !strings.Contains(text, "shard 1 of 4 appears 2 times") {
		t.Fatalf("merge of a set with shard 1 twice exited %d, want 3 naming it:\n%s", code, text)
	}
	if code, text := merge(t, target, filepath.Join(dir, "r4"), urls, complete); code != 0 {
		t.Fatalf("the complete set of the other run exited %d:\n%s", code, text)
	}
}

// report is what the tests read of report.json.
type report struct {
	Properties []property `json:"properties"`
}

type property struct {
	Name    string            `json:"name"`
	Verdict string            `json:"verdict"`
	Reason  string            `json:"reason"`
	Figures map[string]string `json:"figures"`
	Specs   []struct {
		Anomalies []struct {
			Kind   string `json:"kind"`
			Shards []struct {
				Shard int   `json:"shard"`
				Seq   int64 `json:"seq"`
			} `json:"shard_attempts"`
		} `json:"anomalies"`
	} `json:"specs"`
}

func (r *report) read(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, r); err != nil {
		t.Fatal(err)
	}
}

func (r *report) property(name string) property {
	for _, p := range r.Properties {
		if p.Name == name {
			return p
		}
	}
	return property{}
}
