package webhook

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// TestStandardCrossCheck checks our Standard Webhooks output against the library's own
// Verify (which reads the wall clock, hence time.Now), and the library's output against ours.
func TestStandardCrossCheck(t *testing.T) {
	s := mustNew(t, Config{Scheme: SchemeStandard, Secret: stdSecret})
	lib, err := standardwebhooks.NewWebhook(stdSecret)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now()
	h := mustSign(t, s, ts, testBody)
	if err := lib.Verify([]byte(testBody), h); err != nil {
		t.Errorf("library rejects our signature %v: %v", h, err)
	}
	if got := h.Get(HeaderWebhookSignature); !strings.HasPrefix(got, "v1,") {
		t.Errorf("webhook-signature = %q, want v1,<base64>", got)
	}
	sig, err := lib.Sign(testID, ts, []byte(testBody))
	if err != nil {
		t.Fatal(err)
	}
	libHeader := http.Header{}
	libHeader.Set(HeaderWebhookID, testID)
	libHeader.Set(HeaderWebhookTimestamp, fmt.Sprint(ts.Unix()))
	libHeader.Set(HeaderWebhookSignature, "v1,bm90IGl0 "+sig) // a rotated-out signature first
	wantErr(t, "library signature", s.Verify(libHeader, []byte(testBody), ts), nil)
	wrong, _ := s.SignWrong(testID, ts, []byte(testBody))
	if err := lib.Verify([]byte(testBody), wrong); err == nil {
		t.Error("library accepts SignWrong's signature")
	}
}

func TestStandardMalformed(t *testing.T) {
	s := mustNew(t, Config{Scheme: SchemeStandard, Secret: stdSecret})
	for _, c := range []struct{ header, value string }{
		{HeaderWebhookTimestamp, "yesterday"},
		{HeaderWebhookSignature, "v2,abc"},
		{HeaderWebhookSignature, "garbage"},
		{HeaderWebhookID, "evt_other"}, // the id is signed
	} {
		h := mustSign(t, s, now, testBody)
		h.Set(c.header, c.value)
		wantErr(t, c.header+": "+c.value, s.Verify(h, []byte(testBody), now), ErrBadSignature)
	}
}

func TestStripeSeveralV1(t *testing.T) {
	s := mustNew(t, Config{Scheme: SchemeStripe, Secret: rawSecret})
	good := mustSign(t, s, now, testBody).Get(HeaderStripeSignature)
	_, v1, _ := strings.Cut(good, ",v1=")
	wrong, _ := s.SignWrong(testID, now, []byte(testBody))
	_, badV1, _ := strings.Cut(wrong.Get(HeaderStripeSignature), ",v1=")
	t0 := fmt.Sprint(now.Unix())
	for _, c := range []struct {
		what, value string
		want        error
	}{
		{"the matching v1 last", "t=" + t0 + ",v1=" + badV1 + ",v1=" + v1, nil},
		{"the matching v1 first", "t=" + t0 + ",v1=" + v1 + ",v1=" + badV1, nil},
		{"with a v0 and spaces", "t=" + t0 + ", v0=" + badV1 + ", v1=" + v1, nil},
		{"t after the signatures", "v1=" + v1 + ",t=" + t0, nil},
		{"no v1 matches", "t=" + t0 + ",v1=" + badV1 + ",v1=00ff", ErrBadSignature},
		{"only v0", "t=" + t0 + ",v0=" + v1, ErrBadSignature},
		{"no t", "v1=" + v1, ErrBadSignature},
		{"two t", "t=" + t0 + ",t=" + t0 + ",v1=" + v1, ErrBadSignature},
		{"another t", fmt.Sprintf("t=%d,v1=%s", now.Unix()+1, v1), ErrBadSignature},
		{"not hex", "t=" + t0 + ",v1=zz", ErrBadSignature},
	} {
		h := http.Header{}
		h.Set(HeaderStripeSignature, c.value)
		wantErr(t, c.what, s.Verify(h, []byte(testBody), now), c.want)
	}
}

// TestStripeAndGitHubVectors pins the signed strings: HMAC-SHA256 of "t.body" and of body.
func TestStripeAndGitHubVectors(t *testing.T) {
	key := []byte(rawSecret)
	stripe := mustSign(t, mustNew(t, Config{Scheme: SchemeStripe, Secret: rawSecret}), now, testBody)
	want := fmt.Sprintf("t=%d,v1=%s", now.Unix(),
		hex.EncodeToString(macSHA256(key, []byte(fmt.Sprintf("%d.%s", now.Unix(), testBody)))))
	if got := stripe.Get(HeaderStripeSignature); got != want {
		t.Errorf("Stripe-Signature = %q, want %q", got, want)
	}
	gh := mustSign(t, mustNew(t, Config{Scheme: SchemeGitHub, Secret: rawSecret}), now, testBody)
	if got, want := gh.Get(HeaderGitHubSignature), "sha256="+hex.EncodeToString(macSHA256(key, []byte(testBody))); got != want {
		t.Errorf("X-Hub-Signature-256 = %q, want %q", got, want)
	}
	if got := gh.Get(HeaderGitHubDelivery); got != testID {
		t.Errorf("X-GitHub-Delivery = %q, want %q", got, testID)
	}
}

func TestHMACVariants(t *testing.T) {
	key := []byte(rawSecret)
	mac := func(payload string) []byte { return macSHA256(key, []byte(payload)) }
	ts := fmt.Sprint(now.Unix())
	for _, c := range []struct {
		name   string
		cfg    HMACConfig
		header string // want value of X-Signature
	}{
		{"default body hex", HMACConfig{Header: "X-Signature"}, hex.EncodeToString(mac(testBody))},
		{"timestamp.body", HMACConfig{Header: "X-Signature", Template: "{{.Timestamp}}.{{.Body}}", TimestampHeader: "X-Ts"},
			hex.EncodeToString(mac(ts + "." + testBody))},
		{"id and prefix", HMACConfig{Header: "X-Signature", Template: "{{.ID}}|{{.Body}}", Prefix: "sha256=", IDHeader: "X-Id"},
			"sha256=" + hex.EncodeToString(mac(testID+"|"+testBody))},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			s := mustNew(t, Config{Scheme: SchemeHMAC, Secret: rawSecret, HMAC: &cfg})
			h := mustSign(t, s, now, testBody)
			if got := h.Get("X-Signature"); got != c.header {
				t.Errorf("X-Signature = %q, want %q", got, c.header)
			}
			wantErr(t, "round trip", s.Verify(h, []byte(testBody), now), nil)
			if cfg.IDHeader != "" {
				h.Set(cfg.IDHeader, "evt_other")
				wantErr(t, "another id", s.Verify(h, []byte(testBody), now), ErrBadSignature)
			}
		})
	}
}

func TestHMACBadHeaderValues(t *testing.T) {
	cfg := HMACConfig{Header: "X-Signature", Prefix: "sha256=", Encoding: "base64", TimestampHeader: "X-Ts"}
	s := mustNew(t, Config{Scheme: SchemeHMAC, Secret: rawSecret, HMAC: &cfg})
	for _, c := range []struct{ header, value string }{
		{"X-Signature", "sha1=abc"},
		{"X-Signature", "sha256=!!!"},
		{"X-Ts", "soon"},
	} {
		h := mustSign(t, s, now, testBody)
		h.Set(c.header, c.value)
		wantErr(t, c.header+": "+c.value, s.Verify(h, []byte(testBody), now), ErrBadSignature)
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown scheme", Config{Scheme: "svix"}, `unknown signature scheme "svix" (known: none, standard-webhooks, stripe, github, hmac)`},
		{"no secret", Config{Scheme: SchemeStripe}, "scheme stripe needs a secret"},
		{"standard not base64", Config{Scheme: SchemeStandard, Secret: "whsec_%%%"}, "standard-webhooks secret: want whsec_<base64>"},
		{"standard empty key", Config{Scheme: SchemeStandard, Secret: "whsec_"}, "is empty"},
		{"hmac settings elsewhere", Config{Scheme: SchemeGitHub, Secret: "x", HMAC: &HMACConfig{Header: "X"}}, "only for scheme hmac, not github"},
		{"hmac without settings", Config{Scheme: SchemeHMAC, Secret: "x"}, "HMACConfig.Header"},
		{"hmac bad encoding", Config{Scheme: SchemeHMAC, Secret: "x", HMAC: &HMACConfig{Header: "X", Encoding: "b64"}}, `unknown encoding "b64"`},
		{"hmac bad template", Config{Scheme: SchemeHMAC, Secret: "x", HMAC: &HMACConfig{Header: "X", Template: "{{.Body"}}, "hmac template"},
		{"hmac unknown field", Config{Scheme: SchemeHMAC, Secret: "x", HMAC: &HMACConfig{Header: "X", Template: "{{.Reff}}"}}, "known: .ID, .Timestamp, .Body"},
		{"hmac id unsent", Config{Scheme: SchemeHMAC, Secret: "x", HMAC: &HMACConfig{Header: "X", Template: "{{.ID}}{{.Body}}"}}, "IDHeader"},
		{"hmac timestamp unsent", Config{Scheme: SchemeHMAC, Secret: "x", HMAC: &HMACConfig{Header: "X", Template: "{{.Timestamp}}"}}, "TimestampHeader"},
		{"negative tolerance", Config{Scheme: SchemeNone, Tolerance: -time.Second}, "must not be negative"},
	} {
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestParseScheme(t *testing.T) {
	for _, s := range Schemes {
		if got, err := ParseScheme(string(s)); got != s || err != nil {
			t.Errorf("ParseScheme(%q) = %q, %v", s, got, err)
		}
	}
	if got, err := ParseScheme(""); got != SchemeNone || err != nil {
		t.Errorf(`ParseScheme("") = %q, %v; want none`, got, err)
	}
}

func TestDefaultTolerance(t *testing.T) {
	s := mustNew(t, Config{Scheme: SchemeStripe, Secret: rawSecret})
	if s.Tolerance() != DefaultTolerance {
		t.Errorf("Tolerance() = %v, want %v", s.Tolerance(), DefaultTolerance)
	}
	h := mustSign(t, s, now.Add(-DefaultTolerance-time.Second), testBody)
	wantErr(t, "past the default tolerance", s.Verify(h, []byte(testBody), now), ErrStaleTimestamp)
}
