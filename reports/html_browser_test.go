//go:build unix

package reports

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// chromiumArgs are the arguments of every headless Chromium a test starts (a profile of its own,
// in a temp dir), followed by extra.
func chromiumArgs(t *testing.T, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}, extra...)
}

// runChromium runs headless Chromium on a file with extra arguments, in its
// own process group and profile, and returns its standard output. After
// chromiumTimeout the whole group is killed and the test fails.
func runChromium(t *testing.T, chromium, file string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append(chromiumArgs(t, args...), "file://"+file)...)
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

// screenshotsEnv names a folder into which TestHTMLLayoutInChromium writes its screenshots
// (report-failing-1400.png, ...), for a person or a CI artefact; ci/test.sh sets it.
const screenshotsEnv = "RETRYSAFE_HTML_SCREENSHOTS"

// layoutWidths are the window widths the layout test looks at: a desktop and a phone.
var layoutWidths = []int{1400, 390}

// layoutFailingRun is a failing run that shows every anomaly kind (several in one spec, one in
// another), a reason far longer than a line with an unbreakable token in it, the markup an API
// could try to inject, and every extra part of the page: figures, a load plot, the fault
// timeline and a client timeline.
func layoutFailingRun() (*Run, *HTMLExtras) {
	r, extras := browserRun()
	var specs []Spec
	for i := 0; i < len(Kinds); i += 3 {
		var as []Anomaly
		for _, k := range Kinds[i:min(i+3, len(Kinds))] {
			as = append(as, Anomaly{Kind: k, Op: "orders", Key: "k-" + string(k), Seqs: []int64{int64(i + 1)}, Message: "found " + string(k)})
		}
		specs = append(specs, Spec{Text: fmt.Sprintf("orders: check %d of the many, with a spec text long enough to wrap in a narrow column", i/3+1),
			Verdict: Fail, Failure: "see the anomalies", Anomalies: as})
	}
	r.Properties = append(r.Properties, Property{Name: "every-kind", Must: "a property that finds every kind", Verdict: Fail,
		Duration: time.Second, Specs: specs})
	r.Properties[3].Reason = "the target declares a downstream binding: crash-after-ack holds the consumer in the middle of " +
		"its effect and kills it there; crash-under-delivery is the path for consumers that call nothing of the harness's " +
		"(see https://example.invalid/" + strings.Repeat("unbreakable", 20) + ")"
	at := func(ms int) time.Time { return r.Started.Add(time.Duration(ms) * time.Millisecond) }
	extras.ClientTimelines = []ClientTimeline{{Title: "backoff sdk: backs off within its declared envelope, with a long title", Ops: []ClientLane{
		{Label: "order-1 | 100", Attempts: []ClientMark{{at(0), at(1), "503", "k1", false}, {at(101), at(102), "success", "k1", false}}},
		{Label: "order-2 | 100", Attempts: []ClientMark{{at(200), at(1000), "held", "k2", false}, {at(1200), at(1201), "replay", "k2", true}}},
	}}}
	return r, extras
}

// layoutPassingRun is a passing run (with a skipped property and its long reason).
func layoutPassingRun() (*Run, *HTMLExtras) {
	r, extras := layoutFailingRun()
	r.Properties = slices.DeleteFunc(r.Properties, func(p Property) bool { return p.Verdict != Pass && p.Verdict != Skipped })
	r.ExitCode = 0
	return r, extras
}

// domCheck measures the laid-out page: the window's width, the page's width and height, every
// table cell whose content is wider than the cell, and each kind badge of the properties table
// and of the findings, with its link and whether the page holds the explanation it links to and
// shows the badge within the window.
const domCheck = `(() => {
  const out = {width: innerWidth, pageWidth: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight, overflows: [], badges: {}, found: {},
    rows: document.querySelectorAll('#properties tbody tr').length};
  for (const c of document.querySelectorAll('td, th')) {
    if (c.scrollWidth > c.clientWidth + 1) {
      out.overflows.push(c.scrollWidth + 'px in ' + c.clientWidth + 'px: ' + c.textContent.trim().slice(0, 60));
    }
  }
  const badge = (a) => {
    const box = a.getBoundingClientRect();
    return {href: a.getAttribute('href') || '', explained: !!document.getElementById('kind-' + a.dataset.kind),
      shown: box.width > 0 && box.left >= 0 && box.right <= innerWidth + 1};
  };
  for (const a of document.querySelectorAll('#properties a.kind')) out.badges[a.dataset.kind] = badge(a);
  for (const a of document.querySelectorAll('.finding a.kind')) out.found[a.dataset.kind] = badge(a);
  return out;
})()`

// badgeCheck is what domCheck says of one kind's badge.
type badgeCheck struct {
	Href             string
	Explained, Shown bool
}

// layout is what domCheck returns.
type layout struct {
	Width, PageWidth, Height, Rows int
	Overflows                      []string
	Badges, Found                  map[string]badgeCheck
}

// TestHTMLLayoutInChromium looks at report.html in headless Chromium as a person would, at a
// desktop width and at a phone's, for a failing and a passing run (a phone's width through device-metrics emulation: headless Chromium has no
// window narrower than 500 px): through the DOM, no table cell's content is wider than its cell, the page is no
// wider than the window, and every kind the run found has its badge in the properties table
// and in the failure that found it, linked to its explanation in the page. It keeps a
// screenshot of each page (into $RETRYSAFE_HTML_SCREENSHOTS when set).
func TestHTMLLayoutInChromium(t *testing.T) {
	b := startCDP(t, findChromium(t))
	shots := os.Getenv(screenshotsEnv)
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatalf("%s: %v", screenshotsEnv, err)
		}
	}
	for _, tc := range []struct {
		name string
		run  func() (*Run, *HTMLExtras)
	}{{"failing", layoutFailingRun}, {"passing", layoutPassingRun}} {
		r, extras := tc.run()
		page := filepath.Join(t.TempDir(), "report.html")
		if err := WriteHTML(page, r, extras); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range r.Properties {
			for _, s := range p.Specs {
				for _, a := range s.Anomalies {
					want = append(want, string(a.Kind))
				}
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		if tc.name == "failing" && len(want) != len(Kinds) {
			t.Fatalf("the failing run shows %d kinds, want every one (%d)", len(want), len(Kinds))
		}
		for _, width := range layoutWidths {
			t.Run(fmt.Sprintf("%s-%d", tc.name, width), func(t *testing.T) {
				// A desktop window of the phone's width: its layout viewport is exactly that wide
				// (the page's width=device-width lays it out so on a phone), where a phone's
				// emulation would widen the viewport to fit what overflows.
				const mobile = false
				b.open("file://"+page, width, 900, mobile)
				var c layout
				b.eval(domCheck, &c)
				switch {
				case c.Width != width:
					t.Fatalf("the window is %d px wide, want %d: the measures would say nothing", c.Width, width)
				case c.Rows != len(r.Properties):
					t.Fatalf("%d property rows laid out, want %d", c.Rows, len(r.Properties))
				}
				for _, o := range c.Overflows {
					t.Errorf("a cell overflows: %s", o)
				}
				if c.PageWidth > width {
					t.Errorf("the page is %d px wide in a %d px window (it scrolls sideways)", c.PageWidth, width)
				}
				for _, k := range want {
					for where, badges := range map[string]map[string]badgeCheck{"properties table": c.Badges, "findings": c.Found} {
						bc, ok := badges[k]
						switch {
						case !ok:
							t.Errorf("kind %s has no badge in the %s", k, where)
						case bc.Href != "#kind-"+k || !bc.Explained:
							t.Errorf("kind %s's badge in the %s links to %q (its explanation in the page: %v)", k, where, bc.Href, bc.Explained)
						case !bc.Shown:
							t.Errorf("kind %s's badge in the %s is not shown within the window", k, where)
						}
					}
				}
				if len(want) == 0 && len(c.Badges)+len(c.Found) > 0 {
					t.Errorf("a run without anomalies shows kind badges: %v %v", c.Badges, c.Found)
				}
				png := b.screenshot(width, c.Height, mobile)
				if shots != "" {
					name := filepath.Join(shots, fmt.Sprintf("report-%s-%d.png", tc.name, width))
					if err := os.WriteFile(name, png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				t.Logf("%d px: page %d x %d px, %d kinds with badges, screenshot %d bytes", width, c.PageWidth, c.Height, len(c.Badges), len(png))
			})
		}
	}
}
