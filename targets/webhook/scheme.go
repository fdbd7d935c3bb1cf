package webhook

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Scheme names a signature scheme.
type Scheme string

// The schemes, in the order Schemes lists them.
const (
	// SchemeNone signs nothing and accepts everything.
	SchemeNone Scheme = "none"
	// SchemeStandard is Standard Webhooks: webhook-id, webhook-timestamp (Unix seconds) and
	// webhook-signature (space-separated "v1,<base64 HMAC-SHA256 of id.timestamp.body>").
	SchemeStandard Scheme = "standard-webhooks"
	// SchemeStripe is Stripe's: Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">;
	// several v1 values (a secret rotation) are accepted.
	SchemeStripe Scheme = "stripe"
	// SchemeGitHub is GitHub's: X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of body>, the
	// delivery id in X-GitHub-Delivery; it signs no timestamp.
	SchemeGitHub Scheme = "github"
	// SchemeHMAC is a generic HMAC-SHA256 over a templated payload (see HMACConfig).
	SchemeHMAC Scheme = "hmac"
)

// Schemes lists every scheme.
var Schemes = []Scheme{SchemeNone, SchemeStandard, SchemeStripe, SchemeGitHub, SchemeHMAC}

// The headers of the fixed schemes.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
	HeaderStripeSignature  = "Stripe-Signature"
	HeaderGitHubSignature  = "X-Hub-Signature-256"
	HeaderGitHubDelivery   = "X-GitHub-Delivery"
)

// ParseScheme returns the scheme with this name ("" is none).
func ParseScheme(name string) (Scheme, error) {
	if name == "" {
		return SchemeNone, nil
	}
	for _, s := range Schemes {
		if string(s) == name {
			return s, nil
		}
	}
	names := make([]string, len(Schemes))
	for i, s := range Schemes {
		names[i] = string(s)
	}
	return "", fmt.Errorf("webhook: unknown signature scheme %q (known: %s)", name, strings.Join(names, ", "))
}

// noneCodec is the none scheme.
type noneCodec struct{}

var _ codec = noneCodec{}

func (noneCodec) sign(string, time.Time, []byte) (http.Header, error) { return http.Header{}, nil }
func (noneCodec) verify(http.Header, []byte) (time.Time, error)       { return time.Time{}, nil }
func (noneCodec) hasTimestamp() bool                                  { return false }
