package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// stripeCodec is Stripe's scheme: Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
// "t.body">, the secret's bytes as the key. Verification accepts any matching v1 among
// several (Stripe sends one per live secret during a rotation) and ignores other schemes
// (v0).
type stripeCodec struct{ key []byte }

var _ codec = stripeCodec{}

func (c stripeCodec) mac(t int64, body []byte) []byte {
	return macSHA256(c.key, []byte(strconv.FormatInt(t, 10)+"."), body)
}

func (c stripeCodec) sign(_ string, ts time.Time, body []byte) (http.Header, error) {
	t := ts.Unix()
	h := http.Header{}
	h.Set(HeaderStripeSignature, fmt.Sprintf("t=%d,v1=%s", t, hex.EncodeToString(c.mac(t, body))))
	return h, nil
}

func (c stripeCodec) verify(h http.Header, body []byte) (time.Time, error) {
	value := trimmedHeader(h, HeaderStripeSignature)
	if value == "" {
		return time.Time{}, missing(SchemeStripe, HeaderStripeSignature)
	}
	t, sigs, err := parseStripeHeader(value)
	if err != nil {
		return time.Time{}, err
	}
	want := c.mac(t, body)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return time.Unix(t, 0), nil
		}
	}
	return time.Time{}, bad(SchemeStripe, "none of %d v1 signatures matches", len(sigs))
}

func (stripeCodec) hasTimestamp() bool { return true }

// parseStripeHeader splits "t=...,v1=...,v1=..." into the timestamp and the v1 values.
func parseStripeHeader(value string) (int64, []string, error) {
	var (
		t     int64
		haveT bool
		sigs  []string
	)
	for _, part := range strings.Split(value, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || haveT {
				return 0, nil, bad(SchemeStripe, "t=%q: want one Unix timestamp", v)
			}
			t, haveT = n, true
		case "v1":
			sigs = append(sigs, v)
		}
	}
	switch {
	case !haveT:
		return 0, nil, bad(SchemeStripe, "%s has no t=", HeaderStripeSignature)
	case len(sigs) == 0:
		return 0, nil, bad(SchemeStripe, "%s has no v1=", HeaderStripeSignature)
	}
	return t, sigs, nil
}
