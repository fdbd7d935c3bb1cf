//go:build unix

package reports

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chromiumTimeout bounds one headless Chromium call.
const chromiumTimeout = 60 * time.Second

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// screenshotEnv names a file to which TestHTMLInChromium copies its
// screenshot, for a person or a CI artifact; unset, it stays in a temp dir.
const screenshotEnv = "RETRYSAFE_HTML_SCREENSHOT"

// findChromium returns the browser's path or fails the test: the browser
// test never skips.
func findChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return chromiumPath
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Fatalf("headless Chromium is needed at %s (Debian package chromium) to test report.html; "+
		"./ci/test.sh installs it (through ci/ensure-chromium.sh), or run: apt-get install -y chromium", chromiumPath)
	return ""
}

// runChromium runs headless Chromium on a file with extra arguments, in its
// own process group and profile, and returns its standard output. After
// chromiumTimeout the whole group is killed and the test fails.
func runChromium(t *testing.T, chromium, file string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(),
	}
	cmd := exec.CommandContext(ctx, chromium, append(append(base, args...), "file://"+file)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium %v: no answer within %v; killed. stderr:\n%s", args, chromiumTimeout, stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium %v: %v; stderr:\n%s", args, err, stderr.String())
	}
	return string(out)
}

// browserRun is a run with one property of each verdict, evidence that
// tries to inject markup, a figure, a load plot and a fault timeline.
func browserRun() (*Run, *HTMLExtras) {
	r := sampleRun()
	r.Properties = append(r.Properties, Property{
		Name: "tenancy", Verdict: Fail, Duration: 2 * time.Second,
		Specs: []Spec{{Text: "never replays to another tenant", Verdict: Fail, Failure: "bob got alice's order",
			Evidence: &Evidence{Attempts: []string{"< 200 OK\n\n<script>document.title='pwned'</script>"}}}},
	})
	plot := `<svg viewBox="0 0 200 60" width="400"><polyline fill="none" stroke="#0b57d0" points="0,50 50,40 100,42 150,10 200,30"/></svg>`
	return r, &HTMLExtras{LoadPlotHTML: plot, Timeline: sampleTimeline(r.Started)}
}

// domRow matches a property row of the rendered DOM.
var domRow = regexp.MustCompile(`<tr\b[^>]*\bdata-property="([^"]*)"[^>]*\bdata-verdict="([^"]*)"`)

func TestHTMLInChromium(t *testing.T) {
	chromium := findChromium(t)
	r, extras := browserRun()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := WriteHTML(path, r, extras); err != nil {
		t.Fatal(err)
	}

	dom := runChromium(t, chromium, path, "--dump-dom")
	got := map[string]string{}
	for _, m := range domRow.FindAllStringSubmatch(dom, -1) {
		got[m[1]] = m[2]
	}
	for _, p := range r.Properties {
		if want := string(normal(p.Verdict)); got[p.Name] != want {
			t.Errorf("rendered DOM: property %q has verdict row %q, want %q", p.Name, got[p.Name], want)
		}
	}
	if len(got) != len(r.Properties) {
		t.Errorf("rendered DOM has %d property rows, want %d: %v", len(got), len(r.Properties), got)
	}
	for _, want := range []string{
		`<header id="headline" class="headline v-fail" data-verdict="fail">`,
		"<title>retrysafe: FAIL</title>", // the injected script did not run
		`<section id="timeline">`, `<section id="load">`, `<section id="figures">`,
		"&lt;script&gt;document.title='pwned'&lt;/script&gt;",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q:\n%s", want, dom)
		}
	}

	png := filepath.Join(t.TempDir(), "report.png")
	runChromium(t, chromium, path, "--screenshot="+png, "--window-size=1280,2000", "--hide-scrollbars")
	data, err := os.ReadFile(png)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if len(data) == 0 || !strings.HasPrefix(string(data), "\x89PNG\r\n\x1a\n") {
		t.Fatalf("screenshot %s is not a PNG (%d bytes)", png, len(data))
	}
	if dst := os.Getenv(screenshotEnv); dst != "" {
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatalf("%s: %v", screenshotEnv, err)
		}
	}
	t.Logf("screenshot: %d bytes", len(data))
}
