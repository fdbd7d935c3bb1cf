package reference

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/url"
)

// Fingerprint identifies a request's payload: the query plus the JSON body in canonical
// form, so key order and white space do not matter. The body must be valid JSON.
func Fingerprint(query url.Values, body []byte) (string, error) {
	canon, err := CanonicalJSON(body)
	if err != nil {
		return "", err
	}
	return hashParts(query.Encode(), canon), nil
}

// rawFingerprint is the raw-fingerprint mutant's: raw bytes, so reordered keys differ.
func rawFingerprint(rawQuery string, body []byte) string {
	return hashParts(rawQuery, body)
}

// fingerprintWithout is the fingerprint-ignores-field mutant's: the fingerprint of the body
// with one top-level field removed, so a change to that field goes unnoticed.
func fingerprintWithout(query url.Values, body []byte, field string) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return "", err
	}
	delete(obj, field)
	trimmed, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	return Fingerprint(query, trimmed)
}

func hashParts(query string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(query))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// CanonicalJSON re-encodes a JSON document with object keys sorted and no insignificant
// white space. Numbers keep their exact text.
func CanonicalJSON(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
