package framework

import (
	"io"
	"strings"
	"sync"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

// newRedactor returns the redactor of a run against t: its secret values and headers, its public
// values, and the signature headers its consumers' signing schemes use.
func newRedactor(t *targets.Target) *history.Redactor {
	r := history.NewRedactor(t.SecretValues(), t.SecretHeaders(), signatureHeaders(t)...)
	r.Public(t.PublicValues()...)
	return r
}

// signatureHeaders returns the signature header of each consumer's signing scheme and its form
// (besides history.DefaultSignatureHeaders, which every redactor knows).
func signatureHeaders(t *targets.Target) []history.SignatureHeader {
	var out []history.SignatureHeader
	for _, c := range t.Consumers {
		switch s := c.Signing; s.Scheme {
		case webhook.SchemeStripe:
			out = append(out, history.SignatureHeader{Name: webhook.HeaderStripeSignature, Form: history.FormStripe})
		case webhook.SchemeStandard:
			out = append(out, history.SignatureHeader{Name: webhook.HeaderWebhookSignature, Form: history.FormStandard})
		case webhook.SchemeGitHub:
			out = append(out, history.SignatureHeader{Name: webhook.HeaderGitHubSignature, Form: history.FormPrefixed,
				Prefix: webhook.GitHubSignaturePrefix})
		case webhook.SchemeHMAC:
			if s.HMAC != nil && s.HMAC.Header != "" {
				out = append(out, history.SignatureHeader{Name: s.HMAC.Header, Form: history.FormPrefixed, Prefix: s.HMAC.Prefix})
			}
		}
	}
	return out
}

// redactingWriter writes what it is given redacted: each Write is redacted whole, so a writer
// that writes a line at a time (the processes' output) has every secret of a line found.
type redactingWriter struct {
	mu sync.Mutex
	w  io.Writer
	r  *history.Redactor
}

// Write redacts p and writes it; it reports len(p) written when the whole redacted text was.
func (rw *redactingWriter) Write(p []byte) (int, error) {
	red := rw.r.Bytes(p)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, err := rw.w.Write(red); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redactResult returns res with its sentences redacted: the anomalies' messages, the reasons it
// is unknown or skipped, and what it rests on. Checkers build them from redacted attempts; this
// also covers what a spec wrote in them from elsewhere (an observer's or a broker's error).
func redactResult(r *history.Redactor, res check.Result) check.Result {
	out := res
	out.Anomalies = append(out.Anomalies[:0:0], res.Anomalies...)
	for i := range out.Anomalies {
		out.Anomalies[i].Message = r.String(out.Anomalies[i].Message)
	}
	out.Unknown = redactAll(r, res.Unknown)
	out.Observed = redactAll(r, res.Observed)
	out.Skip = r.String(res.Skip)
	return out
}

// redactAll returns a redacted copy of ss (nil stays nil).
func redactAll(r *history.Redactor, ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}

// redactNotes joins a spec's notes, redacted.
func redactNotes(r *history.Redactor, notes []string) string {
	return r.String(strings.Join(notes, "\n"))
}
