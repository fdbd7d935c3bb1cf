package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/client"
)

// clientAttempt is one attempt as the scripted API of these tests received it.
type clientAttempt struct{ ref, key, body string }

// clientAPI is an orders API for the client command: refs starting with "bad" get 422,
// "busy" 503, "lost" their connection closed without an answer, "hold" are held until the client goes away (or the test ends), any other
// 201. Every attempt is recorded and announced on arrived.
type clientAPI struct {
	srv     *httptest.Server
	arrived chan clientAttempt
	mu      sync.Mutex
	seen    []clientAttempt
}

func newClientAPI(t *testing.T) *clientAPI {
	t.Helper()
	a := &clientAPI{arrived: make(chan clientAttempt, 100)}
	done := make(chan struct{})
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b struct{ Ref string }
		_ = json.Unmarshal(body, &b)
		at := clientAttempt{ref: b.Ref, key: r.Header.Get("Idempotency-Key"), body: string(body)}
		a.mu.Lock()
		a.seen = append(a.seen, at)
		a.mu.Unlock()
		a.arrived <- at
		switch {
		case strings.HasPrefix(b.Ref, "bad"):
			w.WriteHeader(http.StatusUnprocessableEntity)
		case strings.HasPrefix(b.Ref, "busy"):
			w.WriteHeader(http.StatusServiceUnavailable)
		case strings.HasPrefix(b.Ref, "lost"):
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
		case strings.HasPrefix(b.Ref, "hold") && len(a.attempts(b.Ref)) == 1:
			select {
			case <-r.Context().Done():
			case <-done:
			}
		default:
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id": "ord_1", "ref": "`+b.Ref+`", "status": "succeeded"}`)
		}
	}))
	t.Cleanup(a.srv.Close)
	t.Cleanup(func() { close(done) })
	return a
}

// attempts returns the attempts with this ref.
func (a *clientAPI) attempts(ref string) []clientAttempt {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []clientAttempt
	for _, at := range a.seen {
		if at.ref == ref {
			out = append(out, at)
		}
	}
	return out
}

// await waits for the next attempt with this ref.
func (a *clientAPI) await(t *testing.T, ref string) clientAttempt {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case at := <-a.arrived:
			if at.ref == ref {
				return at
			}
		case <-timeout:
			t.Fatalf("no attempt of %s arrived", ref)
		}
	}
}

var okLine = regexp.MustCompile(`(?m)^ok (\S+) key=([0-9a-f-]{36}) attempts=(\d+)$`)

func TestClientCommandExitCodes(t *testing.T) {
	a := newClientAPI(t)
	dir := t.TempDir()
	opsFile := filepath.Join(dir, "ops.json")
	if err := os.WriteFile(opsFile, []byte(`[{"ref": "twice", "params": {"amount": 2000}}, {"ref": "twice", "params": {"amount": 3000}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	badOps := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badOps, []byte("[\n{\"ref\": \"a\", \"params\": {\"ref\": \"b\"}}]"), 0o600); err != nil {
		t.Fatal(err)
	}
	fast := []string{"--backoff-initial", "20ms", "--backoff-max", "40ms"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // lines or parts the output must contain
	}{
		{"all succeed", []string{"--ref", "good", "--ops", "2"}, 0, []string{"ok good-1 key=", "ok good-2 key="}},
		{"ops file, one ref twice", []string{"--ops-file", opsFile, "--ops", "2"}, 0, []string{"ok twice key="}},
		{"no key sent", []string{"--ref", "nokey", "--ops", "1", "--mutant", "no-key"}, 0, []string{"ok nokey-1 key=- attempts=1"}},
		{"the last operation with the first one's ref", []string{"--ref", "same", "--ops", "3", "--same-ref-amount", "2000"}, 0,
			[]string{"ok same-1 key=", "ok same-2 key="}},
		{"a same-ref amount needs two operations", []string{"--ref", "x", "--ops", "1", "--same-ref-amount", "2000"}, 2,
			[]string{"--ops 1 with a same-ref amount: at least 2 are needed"}},
		{"rejected", []string{"--ref", "bad", "--ops", "1"}, 1, []string{"failed bad-1: 422 after 1 attempt", "retrysafe: client: 1 of 1 operations failed"}},
		{"out of attempts", []string{"--ref", "busy", "--ops", "1", "--max-attempts", "2"}, 1, []string{"failed busy-1: gave up after 2 attempts: 503", "busy-1: retry 1 in"}},
		{"none answered", []string{"--ref", "lost", "--ops", "1", "--max-attempts", "2"}, 4,
			[]string{"pending lost-1 key=", " attempts=2: none of 2 attempts answered", "retrysafe: client: 1 of 1 operations pending (outcome unknown): run again with the same --state"}},
		{"no url", []string{"--url", "", "--ref", "x", "--ops", "1"}, 2, []string{"--url: the API's base URL is required"}},
		{"bad url", []string{"--url", "ftp://x", "--ref", "x", "--ops", "1"}, 2, []string{"--url ftp://x: want http://HOST:PORT"}},
		{"no ref", []string{"--ops", "1"}, 2, []string{"--ref: a ref prefix is required"}},
		{"no ops", []string{"--ref", "x"}, 2, []string{"--ops 0: at least 1 operation"}},
		{"ops differ from the file", []string{"--ops-file", opsFile, "--ops", "3"}, 2, []string{"--ops 3, but --ops-file " + opsFile + " has 2 entries"}},
		{"bad ops file", []string{"--ops-file", badOps}, 2, []string{"--ops-file " + badOps + ":2: entry 1: params.ref: not allowed"}},
		{"unknown mutant", []string{"--ref", "x", "--ops", "1", "--mutant", "no-jiter"}, 2, []string{`unknown client mutant "no-jiter" (known: never-retries,`}},
		{"unknown jitter", []string{"--ref", "x", "--ops", "1", "--jitter", "half"}, 2, []string{`--jitter: unknown jitter "half"`}},
		{"zero attempts", []string{"--ref", "x", "--ops", "1", "--max-attempts", "0"}, 2, []string{"--max-attempts 0: must be positive"}},
		{"max below initial", []string{"--ref", "x", "--ops", "1", "--backoff-max", "1ms"}, 2, []string{"--backoff-max 1ms is below --backoff-initial 20ms"}},
		{"unknown flag", []string{"--ref", "x", "--ops", "1", "--retries", "3"}, 2, []string{"unknown flag: --retries"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"client", "--url", a.srv.URL, "--state", t.TempDir()}, fast...)
			res := execCLI(t, append(args, tc.args...)...)
			if res.code != tc.code {
				t.Errorf("exit code %d, want %d; output:\n%s", res.code, tc.code, res.out)
			}
			mustContain(t, "output", res.out, tc.want...)
		})
	}
	if same := a.attempts("same-1"); len(same) != 2 || same[0].key == same[1].key || !strings.Contains(same[1].body, `"amount":2000`) ||
		len(a.attempts("same-3")) != 0 {
		t.Errorf("--ops 3 --same-ref-amount 2000 sent %v for same-1 and %d for same-3; want same-1 twice (the second with amount 2000, another key), no same-3",
			same, len(a.attempts("same-3")))
	}
	twice := a.attempts("twice")
	if len(twice) != 2 || twice[0].key == twice[1].key {
		t.Errorf("two ops-file entries with one ref sent keys %v, want two different keys", twice)
	}
}

// --max-attempts defaults to $RETRYSAFE_CLIENT_MAX_ATTEMPTS (how a target's configuration sets
// it); the flag wins over it, and a value that is not a positive number is refused.
func TestClientMaxAttemptsFromEnv(t *testing.T) {
	a := newClientAPI(t)
	for _, tc := range []struct {
		name, env, ref string
		flags          []string
		code           int
		want           string
	}{
		{"from the env", "2", "busy-env", nil, 1, "failed busy-env-1: gave up after 2 attempts: 503"},
		{"the flag over the env", "2", "busy-flag", []string{"--max-attempts", "3"}, 1, "failed busy-flag-1: gave up after 3 attempts: 503"},
		{"not a number", "zero", "busy-nan", nil, 2, `$RETRYSAFE_CLIENT_MAX_ATTEMPTS "zero": want a positive number of attempts`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(maxAttemptsEnv, tc.env)
			args := []string{"client", "--url", a.srv.URL, "--state", t.TempDir(), "--backoff-initial", "10ms", "--backoff-max", "20ms", "--ref", tc.ref, "--ops", "1"}
			res := execCLI(t, append(args, tc.flags...)...)
			if res.code != tc.code {
				t.Errorf("exit code %d, want %d; output:\n%s", res.code, tc.code, res.out)
			}
			mustContain(t, "output", res.out, tc.want)
		})
	}
}

func TestClientCommandInterruptedExitsThree(t *testing.T) {
	a := newClientAPI(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-a.arrived; cancel() }() // as SIGINT would, mid-attempt
	root := newRoot()
	var buf syncBuffer
	root.SetArgs([]string{"client", "--url", a.srv.URL, "--state", dir, "--ref", "hold", "--ops", "1"})
	root.SetOut(&buf)
	root.SetErr(&buf)
	err := root.ExecuteContext(ctx)
	if code := exitCode(err); code != exitIncomplete || !errors.Is(err, client.ErrInterrupted) {
		t.Fatalf("exit code %d (%v), want %d for an interrupted run; output:\n%s", code, err, exitIncomplete, buf.String())
	}
	recs, rerr := client.ReadState(dir)
	if rerr != nil || len(recs) != 1 || recs[0].Status != client.StatusPending {
		t.Errorf("state after the interruption: %+v (%v), want hold-1 pending", recs, rerr)
	}
}

// TestClientProcessKilledAndRestarted is the harness's own use: the client process is
// SIGKILLed mid-attempt and started again with the same command line and state directory,
// and its first attempt after the restart carries the held key and body; SIGTERM stops it
// with exit code 3.
func TestClientProcessKilledAndRestarted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildRetrysafe(t)
	a := newClientAPI(t)
	dir := t.TempDir()
	args := []string{"client", "--url", a.srv.URL, "--state", dir, "--ref", "hold", "--ops", "2"}
	start := func() (*exec.Cmd, *syncBuffer) {
		var out syncBuffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}

	first, _ := start()
	held := a.await(t, "hold-1")
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()

	second, out := start()
	if err := second.Wait(); err != nil {
		t.Fatalf("after the restart: %v\n%s", err, out.String())
	}
	resumed := a.attempts("hold-1")
	if len(resumed) != 2 || resumed[1].key != held.key || resumed[1].body != held.body {
		t.Fatalf("attempts of hold-1: %+v; want the held one, then one with its key and body", resumed)
	}
	if m := okLine.FindAllStringSubmatch(out.String(), -1); len(m) != 2 || m[0][2] != held.key || m[0][3] != "2" {
		t.Errorf("output after the restart:\n%s\nwant ok hold-1 key=%s attempts=2, then hold-2", out.String(), held.key)
	}

	args = []string{"client", "--url", a.srv.URL, "--state", t.TempDir(), "--ref", "hold-term", "--ops", "1"}
	third, out := start()
	a.await(t, "hold-term-1")
	_ = third.Process.Signal(syscall.SIGTERM)
	err := third.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitIncomplete {
		t.Errorf("after SIGTERM: %v, want exit code %d\n%s", err, exitIncomplete, out.String())
	}
	mustContain(t, "output after SIGTERM", out.String(), "interrupted")
}

func TestMutantsListsTheClientsMutants(t *testing.T) {
	out, code, err := invoke("mutants")
	if code != 0 {
		t.Fatalf("mutants: exit %d, %v", code, err)
	}
	for _, m := range client.Mutants {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(string(m.Name)) + ` +caught by ` + regexp.QuoteMeta(m.CaughtBy) + ` +stores - +client: ` + regexp.QuoteMeta(m.Bug) + `$`)
		if !re.MatchString(out) {
			t.Errorf("mutants does not list %s as a client mutant caught by %s:\n%s", m.Name, m.CaughtBy, out)
		}
	}
	if i, j := strings.Index(out, "consumer:"), strings.Index(out, "client:"); i < 0 || j < i {
		t.Errorf("the client's mutants should follow the consumer's:\n%s", out)
	}
}

// retrysafe validate refuses a client's bad error template, an identity path that names no
// field and a jitter range outside [0, 1], each as FILE:LINE: field: message, and exits 2; the
// provider SDK's example validates.
func TestValidateClientSDKFields(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sdk.yaml")
	src := `name: sdk
clients:
  - name: sdk
    errors:
      5xx: {body: '{"error": {"type": "api_error", "message": {{json .Txt}}}}'}
    operations:
      - name: charge
        path: /v1/charges
        body_format: form
        identity: ['$.metadata[*]']
    retry:
      backoff: {jitter: {min: 0.75, max: 1.25}}
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	res := execCLI(t, "validate", file)
	if res.code != exitUsage {
		t.Errorf("validate: exit %d, want %d:\n%s", res.code, exitUsage, res.out)
	}
	mustContain(t, "validate output", res.out,
		file+":5: clients[0].errors.5xx.body: unknown placeholder {{.Txt}} (known: .Status, .Text, .Ref, .Key, .Seq); did you mean {{.Text}}?",
		file+`:10: clients[0].operations[0].identity[0]: in a form body: "$.metadata[*]" can select several values`,
		file+`:12: clients[0].retry.backoff.jitter.max: must be a fraction of the cap between 0 and 1, got "1.25"`)
	example := filepath.Join("..", "..", "targets", "examples", "client-provider-sdk.yaml")
	if res := execCLI(t, "validate", example); res.code != exitOK {
		t.Errorf("validate %s: exit %d:\n%s", example, res.code, res.out)
	}
}
