package faults

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// childEnv makes the test binary act as a tiny HTTP server: the process a lifecycle starts.
const childEnv = "RETRYSAFE_FAULTS_TEST_CHILD"

func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "pid %d", os.Getpid())
		})
		http.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, os.Getenv("EFFECT_DELAY_MS"))
		})
		fmt.Println("child listening on", addr)
		_ = http.ListenAndServe(addr, nil)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// clusterTarget is a target whose lifecycle starts this test binary as a child server.
func clusterTarget(t *testing.T, instances int) *targets.Target {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range instances {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, "http://"+ln.Addr().String())
		ln.Close()
	}
	doc := fmt.Sprintf(`instances: [%s]
operations: [{name: o, path: /o, body: '{"ref": "{{.Ref}}"}'}]
lifecycle:
  command: [%q, -test.run=^$]
  env: {%s: "{{.Addr}}"}
  ready: {path: /healthz, timeout: 20s}
  durable: true
`, strings.Join(urls, ", "), self, childEnv)
	tg, err := targets.Parse("cluster.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// pidOf asks instance i which process answers it.
func pidOf(t *testing.T, tg *targets.Target, i int) string {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(tg.Instances[i].URL.String() + "/healthz")
	if err != nil {
		return "down: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// waitStopped waits until the kernel reports the process stopped (state T in /proc/PID/stat).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command name, which is in parentheses.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " T") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not stopped 5s after SIGSTOP: %s", pid, stat)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startClusterT starts n instances of the test target; they are stopped when the test ends.
func startClusterT(t *testing.T, n int) (*targets.Target, *Cluster, *Processes, context.Context) {
	t.Helper()
	tg := clusterTarget(t, n)
	procs := new(Processes)
	t.Cleanup(func() { procs.StopAll(2 * time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := StartCluster(ctx, tg, procs, targets.LifecycleVars{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tg, c, procs, ctx
}

func TestClusterKillRestartOnSameAddress(t *testing.T) {
	tg, c, _, ctx := startClusterT(t, 2)
	pids := c.Pids()
	before := pidOf(t, tg, 0)
	if before != fmt.Sprintf("pid %d", pids[0]) {
		t.Fatalf("instance 0 answered %q, want pid %d", before, pids[0])
	}
	c.Kill(0)
	if alive(pids[0]) {
		t.Fatalf("pid %d still alive after Kill", pids[0])
	}
	if got := pidOf(t, tg, 0); !strings.HasPrefix(got, "down") {
		t.Fatalf("killed instance still answers: %q", got)
	}
	if got := pidOf(t, tg, 1); got != fmt.Sprintf("pid %d", pids[1]) {
		t.Fatalf("instance 1 answered %q after instance 0 was killed", got)
	}
	if err := c.Start(ctx, 0); err != nil {
		t.Fatal(err)
	}
	after := pidOf(t, tg, 0)
	if after == before || !strings.HasPrefix(after, "pid ") {
		t.Fatalf("after restart instance 0 answered %q (before %q): want a new process on the same address", after, before)
	}
	if c.Kills() != 1 {
		t.Errorf("Kills() = %d, want 1", c.Kills())
	}
}

func TestClusterPauseResume(t *testing.T) {
	tg, c, _, _ := startClusterT(t, 1)
	if err := c.Pause(0); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, c.Pids()[0]) // SIGSTOP takes effect when the kernel next schedules the process
	cl := &http.Client{Timeout: 300 * time.Millisecond}
	if _, err := cl.Get(tg.Instances[0].URL.String() + "/healthz"); err == nil {
		t.Fatal("a paused instance answered")
	}
	if err := c.Resume(0); err != nil {
		t.Fatal(err)
	}
	if got := pidOf(t, tg, 0); !strings.HasPrefix(got, "pid ") {
		t.Fatalf("resumed instance answered %q", got)
	}
}

func TestStopAllLeavesNothing(t *testing.T) {
	tg, c, procs, _ := startClusterT(t, 2)
	pids := c.Pids()
	_ = c.Pause(1) // a paused process must be stopped too
	procs.StopAll(2 * time.Second)
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d outlived StopAll", pid)
		}
	}
	for i := range tg.Instances {
		if conn, err := net.DialTimeout("tcp", tg.Instances[i].Addr(), time.Second); err == nil {
			conn.Close()
			t.Errorf("instance %d still listening after StopAll", i)
		}
	}
}

func TestStartClusterReportsEarlyExit(t *testing.T) {
	doc := `instances: [http://127.0.0.1:1]
operations: [{name: o, path: /o, body: '{}'}]
lifecycle: {command: [/bin/sh, -c, "echo boom; exit 3"], ready: {path: /healthz, timeout: 10s}}
`
	tg, err := targets.Parse("bad.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	var procs Processes
	defer procs.StopAll(time.Second)
	start := time.Now()
	_, err = StartCluster(context.Background(), tg, &procs, targets.LifecycleVars{}, nil)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("StartCluster error = %v, want an early exit with the process's output", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("an exited process was waited for %v", time.Since(start))
	}
}

// A process without a declared instance gets a free address on each start; one that exits
// because another program took that port first is started again on another, and one that exits
// for any other reason is not.
func TestStartRetriesAPortTaken(t *testing.T) {
	for _, tc := range []struct {
		name, says string
		starts     int
		ok         bool
	}{
		{"a port taken", "listen tcp {{.Addr}}: bind: address already in use", 2, true},
		{"another failure", "boom", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count := filepath.Join(t.TempDir(), "starts")
			script := fmt.Sprintf(`echo x >> %s; if [ "$(wc -l < %s)" -eq 1 ]; then echo "%s"; exit 1; fi; echo consuming; sleep 30`,
				count, count, tc.says)
			doc := `consumers:
  - name: q
    transport: amqp
    amqp: {url: "amqp://guest:guest@127.0.0.1:5672/", queue: q}
    event: {body: '{"object": "{{.Object}}", "version": {{.Version}}}'}
    effects: {sql: {driver: sqlite, dsn: /tmp/effects.db, query: "SELECT count(*) FROM effects WHERE event = '{{.EventID}}'"}}
lifecycle:
  command: [/bin/sh, -c, '` + script + `']
  ready: {log: "consuming", timeout: 10s}
`
			tg, err := targets.Parse("q.yaml", []byte(doc), func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			var procs Processes
			defer procs.StopAll(time.Second)
			_, err = StartCluster(context.Background(), tg, &procs, targets.LifecycleVars{}, nil)
			if (err == nil) != tc.ok {
				t.Fatalf("StartCluster error = %v, want success %v", err, tc.ok)
			}
			b, _ := os.ReadFile(count)
			if got := strings.Count(string(b), "x"); got != tc.starts {
				t.Errorf("started %d times, want %d", got, tc.starts)
			}
		})
	}
}
