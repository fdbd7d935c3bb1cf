//go:build unix

package reports

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A browser driven through the Chrome DevTools Protocol over --remote-debugging-pipe (JSON
// messages ended by a NUL byte, commands on fd 3, answers and events on fd 4): headless
// Chromium has no window narrower than 500 px, so a phone's width is set by device-metrics
// emulation, as DevTools' device mode does, and the page is measured by evaluating a script in
// it (report.html itself has none).

// cdpBrowser is one headless Chromium, its page target attached.
type cdpBrowser struct {
	t       *testing.T
	cmd     *exec.Cmd
	w       io.WriteCloser
	session string

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpMessage
	events  chan cdpMessage
}

// cdpMessage is an answer (ID set) or an event (Method set).
type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startCDP starts headless Chromium in its own process group and profile and attaches to a new
// page; the test's clean-up closes it (the group is killed if it does not end).
func startCDP(t *testing.T, chromium string) *cdpBrowser {
	t.Helper()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromium, chromiumArgs(t, "--hide-scrollbars", "--remote-debugging-pipe", "about:blank")...)
	cmd.ExtraFiles = []*os.File{cmdR, outW} // fd 3: what it reads; fd 4: what it writes
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	cmdR.Close()
	outW.Close()
	b := &cdpBrowser{t: t, cmd: cmd, w: cmdW, waiting: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 256)}
	done := make(chan struct{})
	go b.read(outR, done)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		b.call(ctx, "", "Browser.close", nil, nil) // its answer may not come: the browser is gone
		cancel()
		cmdW.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		outR.Close()
		if t.Failed() && stderr.Len() > 0 {
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			t.Logf("chromium's stderr (last lines):\n%s", strings.Join(lines[max(0, len(lines)-10):], "\n"))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.must(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.must(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	b.must(ctx, b.session, "Page.enable", nil, nil)
	return b
}

// read delivers the browser's messages: answers to their callers, events to b.events.
func (b *cdpBrowser) read(r io.Reader, done chan struct{}) {
	defer close(done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		data, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(data[:len(data)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default: // nobody waits for so many events
		}
	}
}

// call sends a command (to the page's session, or to the browser with session "") and decodes
// its result into out.
func (b *cdpBrowser) call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.w.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

// must is call that fails the test on an error.
func (b *cdpBrowser) must(ctx context.Context, session, method string, params, out any) {
	b.t.Helper()
	if err := b.call(ctx, session, method, params, out); err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
}

// open sets the page's viewport (width x height CSS px; mobile: a phone, which reads the page's
// viewport meta tag) and loads url, returning once its load event fired.
func (b *cdpBrowser) open(url string, width, height int, mobile bool) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	b.viewport(ctx, width, height, mobile)
	for drained := false; !drained; { // events of an earlier page
		select {
		case <-b.events:
		default:
			drained = true
		}
	}
	b.must(ctx, b.session, "Page.navigate", map[string]any{"url": url}, nil)
	for {
		select {
		case m := <-b.events:
			if m.Method == "Page.loadEventFired" && m.SessionID == b.session {
				return
			}
		case <-ctx.Done():
			b.t.Fatalf("chromium: %s did not load within %v", url, chromiumTimeout)
		}
	}
}

// viewport emulates a screen width x height CSS px wide, at a device scale factor of 1.
func (b *cdpBrowser) viewport(ctx context.Context, width, height int, mobile bool) {
	b.t.Helper()
	b.must(ctx, b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, nil)
}

// eval evaluates a JavaScript expression in the page and decodes its JSON-able value into out.
func (b *cdpBrowser) eval(expr string, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	b.must(ctx, b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if e := res.ExceptionDetails; e != nil {
		b.t.Fatalf("chromium: the page's script failed: %s %s", e.Text, e.Exception.Description)
	}
	if err := json.Unmarshal(res.Result.Value, out); err != nil {
		b.t.Fatalf("chromium: the page's script returned %s: %v", res.Result.Value, err)
	}
}

// screenshot returns a PNG of the whole page at width (its viewport as tall as the page, at
// most 16000 px).
func (b *cdpBrowser) screenshot(width, height int, mobile bool) []byte {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	b.viewport(ctx, width, min(max(height, 600), 16000), mobile)
	var shot struct {
		Data string `json:"data"`
	}
	b.must(ctx, b.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		b.t.Fatalf("chromium: the screenshot is not a PNG (%d bytes): %v", len(png), err)
	}
	return png
}
