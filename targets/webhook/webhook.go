// Package webhook signs and verifies webhook deliveries under the schemes providers use:
// Standard Webhooks, Stripe, GitHub, a generic HMAC and none. The harness signs the
// deliveries it sends with Signer.Sign (and deliberately wrong ones with SignWrong, or with
// any timestamp through Sign's ts); a consumer checks them with Signer.Verify, whose errors
// tell a missing signature, a bad one and a stale timestamp apart (ErrMissingSignature,
// ErrBadSignature, ErrStaleTimestamp; use errors.Is).
//
// Verification always works on the raw body bytes as received: a body that was decoded and
// re-encoded (even with the same JSON value) does not verify.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// DefaultTolerance is how far a signed timestamp may be from the verifier's clock, in
// either direction, when Config.Tolerance is zero (Standard Webhooks and Stripe use 5 minutes).
const DefaultTolerance = 5 * time.Minute

// Verification errors. Every error Verify returns wraps exactly one of them.
var (
	// ErrMissingSignature: a header the scheme needs (signature, timestamp or id) is absent.
	ErrMissingSignature = errors.New("missing signature")
	// ErrBadSignature: the signature is malformed or does not match the body.
	ErrBadSignature = errors.New("bad signature")
	// ErrStaleTimestamp: the signature matches but its timestamp is further from now than
	// the tolerance, in the past or in the future.
	ErrStaleTimestamp = errors.New("stale timestamp")
)

// Config configures a Signer.
type Config struct {
	Scheme Scheme
	// Secret is the shared signing secret. Standard Webhooks: "whsec_" followed by the
	// base64 key (the prefix is optional); every other scheme uses its bytes as the key.
	Secret string
	// HMAC configures the hmac scheme; it must be nil for the others.
	HMAC *HMACConfig
	// Tolerance bounds the signed timestamp's distance from now (0 = DefaultTolerance).
	// Schemes without a timestamp ignore it.
	Tolerance time.Duration
}

// Signer signs and verifies deliveries under one scheme and secret. It is immutable and
// safe for concurrent use.
type Signer struct {
	scheme    Scheme
	tolerance time.Duration
	right     codec // signs with the secret
	wrong     codec // signs with another secret, for SignWrong
}

// codec is one scheme bound to one key.
type codec interface {
	// sign returns the headers that carry the signature of (id, ts, body).
	sign(id string, ts time.Time, body []byte) (http.Header, error)
	// verify checks the signature of body in h and returns the signed timestamp (the zero
	// time when the scheme signs none).
	verify(h http.Header, body []byte) (time.Time, error)
	// hasTimestamp says whether the scheme signs a timestamp.
	hasTimestamp() bool
}

// New returns the Signer of a configuration, or an error naming the field that is wrong.
func New(cfg Config) (*Signer, error) {
	scheme, err := ParseScheme(string(cfg.Scheme))
	if err != nil {
		return nil, err
	}
	if cfg.HMAC != nil && scheme != SchemeHMAC {
		return nil, fmt.Errorf("webhook: hmac settings are only for scheme hmac, not %s", scheme)
	}
	if cfg.Tolerance < 0 {
		return nil, fmt.Errorf("webhook: tolerance %v: must not be negative", cfg.Tolerance)
	}
	if cfg.Tolerance == 0 {
		cfg.Tolerance = DefaultTolerance
	}
	key, err := schemeKey(scheme, cfg.Secret)
	if err != nil {
		return nil, err
	}
	s := &Signer{scheme: scheme, tolerance: cfg.Tolerance}
	if s.right, err = newCodec(scheme, key, cfg.HMAC); err != nil {
		return nil, err
	}
	if s.wrong, err = newCodec(scheme, wrongKey(key), cfg.HMAC); err != nil {
		return nil, err
	}
	return s, nil
}

// schemeKey returns the HMAC key of a secret.
func schemeKey(scheme Scheme, secret string) ([]byte, error) {
	if scheme == SchemeNone {
		return nil, nil
	}
	if secret == "" {
		return nil, fmt.Errorf("webhook: scheme %s needs a secret", scheme)
	}
	if scheme == SchemeStandard {
		return standardKey(secret)
	}
	return []byte(secret), nil
}

// wrongKey derives a key that differs from key, so that SignWrong's signatures have the
// right format and never match.
func wrongKey(key []byte) []byte {
	sum := sha256.Sum256(append([]byte("retrysafe wrong secret:"), key...))
	return sum[:]
}

// newCodec binds a scheme to a key.
func newCodec(scheme Scheme, key []byte, hc *HMACConfig) (codec, error) {
	switch scheme {
	case SchemeStandard:
		return newStandardCodec(key), nil
	case SchemeStripe:
		return stripeCodec{key: key}, nil
	case SchemeGitHub:
		return githubCodec{key: key}, nil
	case SchemeHMAC:
		return newHMACCodec(key, hc)
	}
	return noneCodec{}, nil
}

// Scheme returns the signer's scheme.
func (s *Signer) Scheme() Scheme { return s.scheme }

// Signs reports whether the scheme signs anything (every scheme but none).
func (s *Signer) Signs() bool { return s.scheme != SchemeNone }

// HasTimestamp reports whether the scheme signs a timestamp, and so whether Verify bounds
// its age. GitHub's does not; hmac's does when a timestamp header is configured.
func (s *Signer) HasTimestamp() bool { return s.right.hasTimestamp() }

// Tolerance returns the largest distance between a signed timestamp and now that Verify
// accepts.
func (s *Signer) Tolerance() time.Duration { return s.tolerance }

// Sign returns the headers that sign a delivery of body with event id id at time ts. Any
// ts may be given, stale ones included; schemes without a timestamp ignore it. The none
// scheme returns no headers.
func (s *Signer) Sign(id string, ts time.Time, body []byte) (http.Header, error) {
	return s.right.sign(id, ts, body)
}

// SignWrong is Sign with another secret: the headers are well formed, and Verify rejects
// them with ErrBadSignature. It lets a test prove that a consumer checks signatures.
func (s *Signer) SignWrong(id string, ts time.Time, body []byte) (http.Header, error) {
	return s.wrong.sign(id, ts, body)
}

// Verify checks that h signs the raw body and, when the scheme signs a timestamp, that it
// is within the tolerance of now. The error wraps ErrMissingSignature, ErrBadSignature or
// ErrStaleTimestamp. The none scheme accepts everything.
func (s *Signer) Verify(h http.Header, body []byte, now time.Time) error {
	ts, err := s.right.verify(h, body)
	if err != nil || !s.right.hasTimestamp() {
		return err
	}
	return checkAge(ts, now, s.tolerance)
}

// VerifyIgnoringTimestamp checks the signature alone and accepts any timestamp: a captured
// delivery then replays forever. It exists for consumers that are broken on purpose.
func (s *Signer) VerifyIgnoringTimestamp(h http.Header, body []byte) error {
	_, err := s.right.verify(h, body)
	return err
}

// VerifyIgnoringFuture is Verify with the timestamp bounded in the past only: a delivery signed
// ahead of time (prepared in advance) is accepted. It exists for consumers that are broken on
// purpose.
func (s *Signer) VerifyIgnoringFuture(h http.Header, body []byte, now time.Time) error {
	ts, err := s.right.verify(h, body)
	if err != nil || !s.right.hasTimestamp() || ts.After(now) {
		return err
	}
	return checkAge(ts, now, s.tolerance)
}

// checkAge rejects a timestamp further than tolerance from now.
func checkAge(ts, now time.Time, tolerance time.Duration) error {
	switch age := now.Sub(ts); {
	case age > tolerance:
		return fmt.Errorf("%w: signed %v ago (tolerance %v)", ErrStaleTimestamp, age.Round(time.Second), tolerance)
	case -age > tolerance:
		return fmt.Errorf("%w: signed %v in the future (tolerance %v)", ErrStaleTimestamp, (-age).Round(time.Second), tolerance)
	}
	return nil
}

// macSHA256 is HMAC-SHA256 of the concatenated parts.
func macSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// missing is ErrMissingSignature naming the header.
func missing(scheme Scheme, header string) error {
	return fmt.Errorf("%w: %s: no %s header", ErrMissingSignature, scheme, header)
}

// bad is ErrBadSignature with a reason.
func bad(scheme Scheme, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadSignature, scheme, fmt.Sprintf(format, args...))
}

// trimmedHeader is h's first value of name with surrounding spaces removed.
func trimmedHeader(h http.Header, name string) string { return strings.TrimSpace(h.Get(name)) }
