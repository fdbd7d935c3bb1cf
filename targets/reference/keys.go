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

// KeyFormat restricts the idempotency keys an API accepts.
type KeyFormat string

const (
	// KeyFormatAny (the default) accepts any key ParseKey accepts.
	KeyFormatAny KeyFormat = "any"
	// KeyFormatUUID accepts only a UUID in its canonical 8-4-4-4-12 hexadecimal form (any
	// version, either case), after RFC 8941 unquoting. The key is still compared verbatim.
	KeyFormatUUID KeyFormat = "uuid"
)

// ParseKeyFormat returns the key format with this name ("" is KeyFormatAny).
func ParseKeyFormat(name string) (KeyFormat, error) {
	switch KeyFormat(name) {
	case "", KeyFormatAny:
		return KeyFormatAny, nil
	case KeyFormatUUID:
		return KeyFormatUUID, nil
	}
	return "", fmt.Errorf("unknown key format %q (known: %s, %s)", name, KeyFormatAny, KeyFormatUUID)
}

// check returns why an unquoted key does not have the format, or nil.
func (f KeyFormat) check(key string) error {
	if f == KeyFormatUUID && !isCanonicalUUID(key) {
		return errors.New("Idempotency-Key must be a UUID in the form 8-4-4-4-12 hexadecimal digits, " +
			"such as 8e03978e-40d5-43e8-bc93-6894a57f9324")
	}
	return nil
}

// isCanonicalUUID reports whether s is xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in hexadecimal
// digits. Unlike uuid.Parse it refuses the urn:uuid: prefix, braces and the form without
// hyphens: they are not the canonical form.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
