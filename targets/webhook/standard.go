package webhook

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// standardSecretPrefix starts a Standard Webhooks secret.
const standardSecretPrefix = "whsec_"

// standardKey decodes a Standard Webhooks secret: base64 after the optional whsec_ prefix.
func standardKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, standardSecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhook: standard-webhooks secret: want %s<base64>: %v", standardSecretPrefix, err)
	}
	if len(key) == 0 {
		return nil, errors.New("webhook: standard-webhooks secret: the key after " + standardSecretPrefix + " is empty")
	}
	return key, nil
}

// standardCodec signs and verifies through the Standard Webhooks library. The library's own
// timestamp check has a fixed 5-minute tolerance and reads the wall clock, so verification
// ignores it and Signer.Verify bounds the age itself.
type standardCodec struct{ wh *standardwebhooks.Webhook }

var _ codec = standardCodec{}

func newStandardCodec(key []byte) standardCodec {
	wh, _ := standardwebhooks.NewWebhookRaw(key) // never fails
	return standardCodec{wh: wh}
}

func (c standardCodec) sign(id string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := c.wh.Sign(id, ts, body)
	if err != nil {
		return nil, fmt.Errorf("webhook: standard-webhooks: sign: %w", err)
	}
	h := http.Header{}
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderWebhookSignature, sig)
	return h, nil
}

func (c standardCodec) verify(h http.Header, body []byte) (time.Time, error) {
	for _, name := range []string{HeaderWebhookID, HeaderWebhookTimestamp, HeaderWebhookSignature} {
		if h.Get(name) == "" {
			return time.Time{}, missing(SchemeStandard, name)
		}
	}
	sec, err := strconv.ParseInt(trimmedHeader(h, HeaderWebhookTimestamp), 10, 64)
	if err != nil {
		return time.Time{}, bad(SchemeStandard, "%s %q is not Unix seconds", HeaderWebhookTimestamp, h.Get(HeaderWebhookTimestamp))
	}
	switch err := c.wh.VerifyIgnoringTimestamp(body, h); {
	case errors.Is(err, standardwebhooks.ErrRequiredHeaders):
		return time.Time{}, fmt.Errorf("%w: %s: %v", ErrMissingSignature, SchemeStandard, err)
	case err != nil:
		return time.Time{}, bad(SchemeStandard, "no v1 signature matches (%v)", err)
	}
	return time.Unix(sec, 0), nil
}

func (standardCodec) hasTimestamp() bool { return true }
