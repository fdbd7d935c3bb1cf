package probe

import (
	"context"
	"fmt"
	"github.com/retrysafe/retrysafe/reports/profile"
	"strings"
	"unicode/utf8"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// maxEvidenceBody is how much of a response body an Exchange keeps.
const maxEvidenceBody = 300

// finding accumulates one field while it is probed.
type finding struct {
	p *prober
	f profile.Field
}

// field starts a finding for the named field, probed on def.
func (p *prober) field(name string, def *targets.Operation) *finding {
	fd := &finding{p: p, f: profile.Field{Name: name}}
	if def != nil {
		fd.f.Operation = def.Name
	}
	return fd
}

// do sends one attempt and keeps it as evidence. ok is false when the attempt got no answer or
// the budget is spent; the field is then NotProbed, saying why.
func (fd *finding) do(ctx context.Context, o op, s sendOpts) (history.Attempt, bool) {
	a, sent := fd.p.send(ctx, o, s)
	if !sent {
		fd.f.Value, fd.f.Note = profile.NotProbed, fmt.Sprintf("the probe's budget of %d requests was spent", fd.p.opts.MaxAttempts)
		return a, false
	}
	fd.keep(a, s)
	if a.Outcome != history.OK {
		fd.f.Value = profile.NotProbed
		fd.f.Note = fmt.Sprintf("attempt #%d got no answer (%s): %s", a.Seq, a.Outcome, a.Err)
		return a, false
	}
	return a, true
}

// keep adds an attempt to the evidence.
func (fd *finding) keep(a history.Attempt, s sendOpts) {
	fd.f.Evidence = append(fd.f.Evidence, exchange(a, sent(s)))
}

// count counts o's records and keeps the count; ok is false when there is no observer or it
// failed (noted).
func (fd *finding) count(ctx context.Context, o op) (int, bool) {
	c, ok, note := fd.p.records(ctx, o)
	if note != "" {
		fd.note("%s", note)
	}
	if !ok {
		return 0, false
	}
	fd.f.Records = append(fd.f.Records, c)
	return c.Records, true
}

// note appends to the field's note.
func (fd *finding) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if fd.f.Note == "" {
		fd.f.Note = s
		return
	}
	fd.f.Note += "; " + s
}

// notProbed ends the finding without a value.
func (fd *finding) notProbed(format string, args ...any) profile.Field {
	fd.f.Value = profile.NotProbed
	fd.f.Unsafe = ""
	fd.note(format, args...)
	return fd.f
}

// done ends the finding with a value, unless a failed attempt already made it NotProbed.
func (fd *finding) done(value string) profile.Field {
	if fd.f.Value != profile.NotProbed {
		fd.f.Value = value
	}
	return fd.f
}

// unsafe marks the finding's behaviour unsafe.
func (fd *finding) unsafe(format string, args ...any) {
	fd.f.Unsafe = fmt.Sprintf(format, args...)
}

// sent describes how an attempt differed from an ordinary one.
func sent(s sendOpts) string {
	var parts []string
	switch {
	case s.key.Omit:
		parts = append(parts, "no key")
	case s.key.Raw != nil && *s.key.Raw == "":
		parts = append(parts, "empty key")
	case s.key.Raw != nil:
		parts = append(parts, "raw key")
	case s.key.Form != "":
		parts = append(parts, string(s.key.Form)+" key")
	}
	if s.variant {
		parts = append(parts, "variant body")
	}
	if s.body != nil {
		parts = append(parts, "reordered body")
	}
	if s.noAuth {
		parts = append(parts, "no credentials")
	}
	return strings.Join(parts, ", ")
}

// exchange turns a recorded (already redacted) attempt into evidence.
func exchange(a history.Attempt, how string) profile.Exchange {
	x := profile.Exchange{Seq: a.Seq, Op: a.Op, Tenant: a.Tenant, Key: shortKey(a.Key), Method: a.Method, URL: a.URL,
		Sent: how, Status: a.Status, Outcome: string(a.Outcome), Body: snippet(a.RespBody), Err: a.Err}
	for name, vals := range a.RespHeader {
		l := strings.ToLower(name)
		if strings.Contains(l, "idempot") || strings.Contains(l, "replay") || l == "retry-after" {
			if x.Headers == nil {
				x.Headers = map[string]string{}
			}
			x.Headers[name] = strings.Join(vals, ", ")
		}
	}
	return x
}

// shortKey abbreviates a long key for evidence.
func shortKey(k string) string {
	if len(k) <= 48 {
		return k
	}
	return fmt.Sprintf("%s...(%d characters)", k[:32], utf8.RuneCountInString(k))
}

// snippet returns the start of a body as text.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > maxEvidenceBody {
		cut := maxEvidenceBody
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
