package webhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// now is the verifier's clock in every case: signatures are made at or around it.
var now = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)

const (
	testID    = "evt_0001"
	testBody  = `{"id":"evt_0001","type":"object.updated","object":"obj_1","version":3}`
	stdSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	rawSecret = "s3cr3t-for-tests"
	noError   = "<no error>"
)

// schemeConfigs is one working configuration per scheme, hmac in several variants.
func schemeConfigs() map[string]Config {
	return map[string]Config{
		"none":              {Scheme: SchemeNone},
		"standard-webhooks": {Scheme: SchemeStandard, Secret: stdSecret},
		"stripe":            {Scheme: SchemeStripe, Secret: rawSecret},
		"github":            {Scheme: SchemeGitHub, Secret: rawSecret},
		"hmac/body-hex":     {Scheme: SchemeHMAC, Secret: rawSecret, HMAC: &HMACConfig{Header: "X-Signature"}},
		"hmac/prefixed-base64": {Scheme: SchemeHMAC, Secret: rawSecret, HMAC: &HMACConfig{
			Header: "X-Signature", Encoding: "base64", Prefix: "sha256="}},
		"hmac/timestamped": {Scheme: SchemeHMAC, Secret: rawSecret, HMAC: &HMACConfig{
			Header: "X-Signature", Template: "{{.Timestamp}}.{{.Body}}", TimestampHeader: "X-Timestamp"}},
		"hmac/id-and-timestamp": {Scheme: SchemeHMAC, Secret: rawSecret, HMAC: &HMACConfig{
			Header: "X-Signature", Template: "{{.ID}}:{{.Timestamp}}:{{.Body}}", Prefix: "v1=",
			TimestampHeader: "X-Timestamp", IDHeader: "X-Event-Id"}},
		"hmac/timestamp-header-unsigned": {Scheme: SchemeHMAC, Secret: rawSecret, HMAC: &HMACConfig{
			Header: "X-Signature", TimestampHeader: "X-Timestamp"}},
	}
}

func mustNew(t *testing.T, cfg Config) *Signer {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return s
}

func mustSign(t *testing.T, s *Signer, ts time.Time, body string) http.Header {
	t.Helper()
	h, err := s.Sign(testID, ts, []byte(body))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return h
}

// wantErr checks that err wraps want (nil: no error).
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		got := noError
		if err != nil {
			got = err.Error()
		}
		t.Errorf("%s: error %s, want %v", what, got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	for name, cfg := range schemeConfigs() {
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, cfg)
			h := mustSign(t, s, now, testBody)
			wantErr(t, "Verify of its own signature", s.Verify(h, []byte(testBody), now), nil)
			wantErr(t, "Verify within the tolerance", s.Verify(h, []byte(testBody), now.Add(DefaultTolerance)), nil)
			if s.Signs() != (cfg.Scheme != SchemeNone) || (len(h) == 0) != (cfg.Scheme == SchemeNone) {
				t.Errorf("Signs() = %v with %d headers for scheme %s", s.Signs(), len(h), cfg.Scheme)
			}
		})
	}
}

func TestWrongSecretAndTamperedBody(t *testing.T) {
	for name, cfg := range schemeConfigs() {
		if cfg.Scheme == SchemeNone {
			continue
		}
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, cfg)
			wrong, err := s.SignWrong(testID, now, []byte(testBody))
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, "SignWrong", s.Verify(wrong, []byte(testBody), now), ErrBadSignature)
			other := cfg
			other.Secret = "other-" + rawSecret
			if cfg.Scheme == SchemeStandard {
				other.Secret = "whsec_b3RoZXIgc2VjcmV0"
			}
			h := mustSign(t, mustNew(t, other), now, testBody)
			wantErr(t, "another secret", s.Verify(h, []byte(testBody), now), ErrBadSignature)
			h = mustSign(t, s, now, testBody)
			tampered := strings.Replace(testBody, `"version":3`, `"version":4`, 1)
			wantErr(t, "tampered body", s.Verify(h, []byte(tampered), now), ErrBadSignature)
			reencoded := strings.ReplaceAll(testBody, ",", ", ") // the same JSON value
			wantErr(t, "re-encoded body", s.Verify(h, []byte(reencoded), now), ErrBadSignature)
		})
	}
}

func TestTimestampTolerance(t *testing.T) {
	for name, cfg := range schemeConfigs() {
		t.Run(name, func(t *testing.T) {
			cfg.Tolerance = time.Minute
			s := mustNew(t, cfg)
			var want error
			if s.HasTimestamp() {
				want = ErrStaleTimestamp
			}
			for _, c := range []struct {
				what string
				ts   time.Time
				want error
			}{
				{"at the past edge", now.Add(-time.Minute), nil},
				{"at the future edge", now.Add(time.Minute), nil},
				{"a second too old", now.Add(-time.Minute - time.Second), want},
				{"a second too far ahead", now.Add(time.Minute + time.Second), want},
				{"a day old", now.Add(-24 * time.Hour), want},
			} {
				h := mustSign(t, s, c.ts, testBody)
				wantErr(t, c.what, s.Verify(h, []byte(testBody), now), c.want)
				wantErr(t, c.what+" ignoring timestamps", s.VerifyIgnoringTimestamp(h, []byte(testBody)), nil)
			}
		})
	}
}

func TestHasTimestamp(t *testing.T) {
	want := map[string]bool{
		"none": false, "standard-webhooks": true, "stripe": true, "github": false,
		"hmac/body-hex": false, "hmac/prefixed-base64": false, "hmac/timestamped": true,
		"hmac/id-and-timestamp": true, "hmac/timestamp-header-unsigned": true,
	}
	for name, cfg := range schemeConfigs() {
		if got := mustNew(t, cfg).HasTimestamp(); got != want[name] {
			t.Errorf("%s: HasTimestamp() = %v, want %v", name, got, want[name])
		}
	}
}

// TestMissingHeaders removes each header Sign set, one at a time.
func TestMissingHeaders(t *testing.T) {
	for name, cfg := range schemeConfigs() {
		if cfg.Scheme == SchemeNone {
			continue
		}
		t.Run(name, func(t *testing.T) {
			s := mustNew(t, cfg)
			h := mustSign(t, s, now, testBody)
			for header := range h {
				if header == http.CanonicalHeaderKey(HeaderGitHubDelivery) {
					continue // informational: GitHub does not sign it
				}
				partial := h.Clone()
				partial.Del(header)
				wantErr(t, "without "+header, s.Verify(partial, []byte(testBody), now), ErrMissingSignature)
			}
			wantErr(t, "no headers at all", s.Verify(http.Header{}, []byte(testBody), now), ErrMissingSignature)
		})
	}
}
