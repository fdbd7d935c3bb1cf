package probe

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
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
func (fd *finding) do(o *framework.Op, s framework.Send) (history.Attempt, bool) {
	a, sent := fd.p.send(o, s)
	return a, fd.took(a, sent, describe(s))
}

// doFirst sends the first, ordinary attempt of a field's exchange, as do does; ok is also
// false when it was not answered 2xx (the field is then NotProbed, saying so).
func (fd *finding) doFirst(o *framework.Op) (history.Attempt, bool) {
	a, ok := fd.do(o, framework.Send{})
	if ok && !success(a) {
		fd.notProbed("the first request was answered %d", a.Status)
		return a, false
	}
	return a, ok
}

// took keeps an attempt sent as how, or notes that the budget was spent (sent false); ok is
// false unless the attempt got an answer.
func (fd *finding) took(a history.Attempt, sent bool, how string) bool {
	if !sent {
		fd.f.Value, fd.f.Note = profile.NotProbed, fmt.Sprintf("the probe's budget of %d requests was spent", fd.p.opts.MaxAttempts)
		return false
	}
	fd.keepAs(a, how)
	if a.Outcome != history.OK {
		fd.f.Value = profile.NotProbed
		fd.f.Note = fmt.Sprintf("attempt #%d got no answer (%s): %s", a.Seq, a.Outcome, a.Err)
		return false
	}
	return true
}

// keep adds an attempt sent with s to the evidence.
func (fd *finding) keep(a history.Attempt, s framework.Send) { fd.keepAs(a, describe(s)) }

// keepAs adds an attempt to the evidence, described as how.
func (fd *finding) keepAs(a history.Attempt, how string) {
	fd.f.Evidence = append(fd.f.Evidence, exchange(a, how))
}

// count counts o's records through its observer (Op.Count) and keeps the count; ok is false
// when there is no observer or it failed (noted).
func (fd *finding) count(o *framework.Op) (int, bool) {
	c := o.Count()
	if !c.Taken {
		return 0, false
	}
	if c.Err != "" {
		fd.note("observer: %s", c.Err)
		return 0, false
	}
	tenant := c.Tenant
	if tenant == "-" {
		tenant = ""
	}
	fd.f.Records = append(fd.f.Records, profile.Count{Op: c.Op, Tenant: tenant, Ref: c.Ref, Records: c.N})
	return c.N, true
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
	fd.f.Unsafe, fd.f.Deviation = "", ""
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

// deviates marks the finding's behaviour as contradicting a SHOULD of the IETF draft (kept
// only under the ietf base, see markDeviations).
func (fd *finding) deviates(format string, args ...any) {
	fd.f.Deviation = fmt.Sprintf(format, args...)
}

// describe says how an attempt sent with s differed from an ordinary one.
func describe(s framework.Send) string {
	var parts []string
	switch {
	case s.Key.Omit:
		parts = append(parts, "no key")
	case s.Key.Raw != nil && *s.Key.Raw == "":
		parts = append(parts, "empty key")
	case s.Key.Raw != nil:
		parts = append(parts, "raw key")
	case s.Key.Form != "":
		parts = append(parts, string(s.Key.Form)+" key")
	}
	if s.Variant {
		parts = append(parts, "variant body")
	}
	if s.Reformat {
		parts = append(parts, "reordered body")
	}
	if s.Body != nil {
		parts = append(parts, "other body")
	}
	switch s.Auth {
	case "none":
		parts = append(parts, "no credentials")
	case "unknown":
		parts = append(parts, "unknown credentials")
	}
	if s.SlowMs > 0 {
		parts = append(parts, fmt.Sprintf("slowed %d ms by the slow hook", s.SlowMs))
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
