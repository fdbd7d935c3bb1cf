package history

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultFormatBody is how many bytes of each body String shows.
const DefaultFormatBody = 2 << 10

// String renders a as a short HTTP transcript; see Format.
func (a Attempt) String() string { return Format(a, DefaultFormatBody) }

// Format renders a as a short HTTP-style transcript for evidence: a summary
// line, then the request ("> " lines), the response ("< " lines) and the
// error and note ("! " lines). Bodies longer than maxBody bytes are cut
// (maxBody <= 0 means DefaultFormatBody); headers are sorted by name.
// Format redacts nothing itself: attempts taken from a History are redacted.
//
//	#3 op=create key=k-1 tenant=acme instance=a outcome=ok 1.2ms
//	> POST http://127.0.0.1:8080/orders
//	> Idempotency-Key: "k-1"
//	>
//	> {"amount":100}
//	< 201 Created
//	< Content-Type: application/json
//	<
//	< {"id":"o-1"}
func Format(a Attempt, maxBody int) string {
	if maxBody <= 0 {
		maxBody = DefaultFormatBody
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#%d", a.Seq)
	for _, f := range [][2]string{{"op", a.Op}, {"key", a.Key}, {"tenant", a.Tenant}, {"instance", a.Instance}} {
		if f[1] != "" {
			fmt.Fprintf(&b, " %s=%s", f[0], f[1])
		}
	}
	fmt.Fprintf(&b, " outcome=%s %s\n", a.Outcome, a.Duration().Round(10*time.Microsecond))

	fmt.Fprintf(&b, "> %s %s\n", a.Method, a.URL)
	if a.Compacted {
		b.WriteString("> (compact record: headers and request body not kept)\n")
	}
	writeHeader(&b, "> ", a.ReqHeader)
	writeBody(&b, "> ", a.ReqBody, false, maxBody)

	switch {
	case a.IsEvent():
		// An observed event has no response.
	case a.Status != 0:
		fmt.Fprintf(&b, "< %d %s\n", a.Status, http.StatusText(a.Status))
		writeHeader(&b, "< ", a.RespHeader)
		writeBody(&b, "< ", a.RespBody, a.Truncated, maxBody)
	default:
		b.WriteString("< (no response)\n")
	}
	if a.Err != "" {
		fmt.Fprintf(&b, "! error: %s\n", a.Err)
	}
	if a.Answer != "" {
		fmt.Fprintf(&b, "! the harness (as the API) answered %s at +%v, to operation %q", a.Answer, a.Answered.Sub(a.Start).Round(time.Millisecond), a.Identity)
		if a.RetryAfter > 0 {
			fmt.Fprintf(&b, ", Retry-After %v", a.RetryAfter)
		}
		if a.Life > 1 {
			fmt.Fprintf(&b, ", client restart %d", a.Life-1)
		}
		b.WriteString("\n")
	}
	if a.Reference != "" {
		fmt.Fprintf(&b, "! operation reference: %s\n", a.Reference)
	}
	if c := a.Current; c != nil {
		writeRead(&b, c, a.End, maxBody)
	}
	if a.Note != "" {
		fmt.Fprintf(&b, "! note: %s\n", a.Note)
	}
	return b.String()
}

// writeHeader writes h sorted by name, one value a line.
func writeHeader(b *strings.Builder, prefix string, h http.Header) {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range h[name] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, name, v)
		}
	}
}

// writeBody writes a blank prefixed line and then body, cut at max bytes
// (on a rune boundary); bodies that are not UTF-8 text are summarised by
// their length.
func writeBody(b *strings.Builder, prefix string, body []byte, truncated bool, max int) {
	if len(body) == 0 {
		return
	}
	b.WriteString(strings.TrimRight(prefix, " ") + "\n")
	shown := body
	if len(shown) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(shown[cut]) {
			cut--
		}
		shown = shown[:cut]
	}
	if !utf8.Valid(shown) {
		fmt.Fprintf(b, "%s(%d bytes of binary data)\n", prefix, len(body))
		return
	}
	for _, line := range strings.Split(string(shown), "\n") {
		fmt.Fprintf(b, "%s%s\n", prefix, line)
	}
	if rest := len(body) - len(shown); rest > 0 {
		fmt.Fprintf(b, "%s... (%d more bytes not shown)\n", prefix, rest)
	}
	if truncated {
		fmt.Fprintf(b, "%s... (body cut by the client at %d bytes)\n", prefix, len(body))
	}
}

// writeRead writes the fresh read of the resource an answer named (profile.replay_returns:
// current), made after the answer ended at end.
func writeRead(b *strings.Builder, c *Read, end time.Time, maxBody int) {
	fmt.Fprintf(b, "! fresh read of GET %s at +%v: ", c.URL, c.At.Sub(end).Round(10*time.Microsecond))
	if c.Err != "" {
		fmt.Fprintf(b, "%s\n", c.Err)
		return
	}
	fmt.Fprintf(b, "%d %s\n", c.Status, http.StatusText(c.Status))
	writeBody(b, "! ", c.Body, false, maxBody)
}
