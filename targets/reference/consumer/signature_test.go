package consumer

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/webhook"
)

// signingConfigs is one configuration per signing scheme.
var signingConfigs = map[string]webhook.Config{
	"standard-webhooks": {Scheme: webhook.SchemeStandard, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
	"stripe":            {Scheme: webhook.SchemeStripe, Secret: "whsec_stripe_test"},
	"github":            {Scheme: webhook.SchemeGitHub, Secret: "github-test"},
	"hmac": {Scheme: webhook.SchemeHMAC, Secret: "hmac-test", HMAC: &webhook.HMACConfig{
		Header: "X-Signature", Template: "{{.ID}}.{{.Timestamp}}.{{.Body}}", Prefix: "sha256=",
		TimestampHeader: "X-Timestamp", IDHeader: "X-Event-Id"}},
}

// sigCase is one delivery of TestSignatureRejections.
type sigCase struct {
	id     string
	body   []byte
	header http.Header
	want   string // the 401's detail; "" = accepted
}

// TestSignatureRejections: per scheme, a delivery without a signature, with a wrong one,
// with a tampered body or with a stale timestamp is a 401 with no effect; a good one is
// processed. GitHub signs no timestamp, so its old and future deliveries are accepted.
func TestSignatureRejections(t *testing.T) {
	for name, cfg := range signingConfigs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, newBackend(t, "memory"), rigOpts{signing: cfg})
			now := r.clock.Now()
			body := func(id string) []byte { return event(id, "obj_1", 1) }
			sign := func(id string, ts time.Time, wrong bool) http.Header {
				f := r.signer.Sign
				if wrong {
					f = r.signer.SignWrong
				}
				h, err := f(id, ts, body(id))
				if err != nil {
					t.Fatal(err)
				}
				return h
			}
			stale := ""
			if r.signer.HasTimestamp() {
				stale = "stale timestamp"
			}
			for _, c := range []sigCase{
				{"evt_good", body("evt_good"), sign("evt_good", now, false), ""},
				{"evt_unsigned", body("evt_unsigned"), nil, "missing signature"},
				{"evt_wrong", body("evt_wrong"), sign("evt_wrong", now, true), "bad signature"},
				{"evt_tampered", event("evt_tampered", "obj_1", 9), sign("evt_tampered", now, false), "bad signature"},
				{"evt_old", body("evt_old"), sign("evt_old", now.Add(-10*time.Minute), false), stale},
				{"evt_future", body("evt_future"), sign("evt_future", now.Add(10*time.Minute), false), stale},
			} {
				a := r.post(c.body, c.header)
				wantEffects := 1
				if c.want != "" {
					wantEffects = 0
					if a.status != http.StatusUnauthorized || !strings.Contains(a.str("detail"), c.want) ||
						a.header.Get("Content-Type") != "application/problem+json" {
						t.Errorf("%s: %d %v, want a 401 problem saying %q", c.id, a.status, a.body, c.want)
					}
				} else {
					wantStatus(t, c.id, a, http.StatusOK, "processed")
				}
				if n := r.effects(c.id); n != wantEffects {
					t.Errorf("%s: effects = %d, want %d", c.id, n, wantEffects)
				}
			}
		})
	}
}

// TestUnsignedConsumerAcceptsAll: with the none scheme nothing is checked.
func TestUnsignedConsumerAcceptsAll(t *testing.T) {
	r := newRig(t, newBackend(t, "memory"), rigOpts{})
	wantStatus(t, "unsigned", r.post(event("evt_u", "obj_1", 1), nil), http.StatusOK, "processed")
}

// TestToleranceOverride: Config.Tolerance bounds the timestamp's age.
func TestToleranceOverride(t *testing.T) {
	clock := newFakeClock()
	cfg := signingConfigs["stripe"]
	c, err := New(Config{Store: NewMemoryStore(), Signing: cfg, Tolerance: time.Minute, Now: clock.Now, WorkDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Signer().Tolerance(); got != time.Minute {
		t.Errorf("tolerance = %v, want 1m", got)
	}
	body := event("evt_t", "obj_1", 1)
	h, _ := c.Signer().Sign("evt_t", clock.Now().Add(-2*time.Minute), body)
	if err := c.verify(h, body); err == nil {
		t.Error("a 2-minute-old signature was accepted with a 1-minute tolerance")
	}
}
