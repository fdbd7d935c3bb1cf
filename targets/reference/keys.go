package reference

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dunglas/httpsfv"
)

// MaxKeyLength is the longest idempotency key accepted, counted in characters after
// unquoting.
const MaxKeyLength = 255

// ParseKey returns the idempotency key carried by an Idempotency-Key header value. The
// RFC 8941 string form `"abc"` and the bare form `abc` are the same key; a value that is not
// a quoted string is the key verbatim (so a UUID starting with a digit is a valid bare key).
func ParseKey(value string) (string, error) {
	v := strings.TrimSpace(value)
	if strings.HasPrefix(v, `"`) {
		item, err := httpsfv.UnmarshalItem([]string{v})
		if err != nil {
			return "", fmt.Errorf("Idempotency-Key is not a valid RFC 8941 string: %v", err)
		}
		s, ok := item.Value.(string)
		if !ok {
			return "", errors.New("Idempotency-Key is not a valid RFC 8941 string")
		}
		v = s
	}
	if v == "" {
		return "", errors.New("Idempotency-Key is empty")
	}
	if n := utf8.RuneCountInString(v); n > MaxKeyLength {
		return "", fmt.Errorf("Idempotency-Key is %d characters long; the limit is %d", n, MaxKeyLength)
	}
	return v, nil
}

// scopeID joins the parts of a key's scope into one opaque, fixed-length id.
func scopeID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s|", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// downstreamKey derives the idempotency key sent to the downstream provider: every attempt
// of one operation (tenant, operation, key) sends the same one.
func downstreamKey(tenant, operation, key string) string {
	return "rs_" + scopeID("downstream", tenant, operation, key)[:40]
}
