package webhook

import (
	"bytes"
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// DefaultHMACTemplate is the signed payload of the hmac scheme when none is given: the raw
// body alone.
const DefaultHMACTemplate = "{{.Body}}"

// HMACConfig configures the generic hmac scheme: HMAC-SHA256 (key = the secret's bytes)
// over a payload built by a template, encoded and prefixed into one header.
type HMACConfig struct {
	// Header carries the signature (required).
	Header string
	// Template is a Go text/template over {{.ID}} (the event id), {{.Timestamp}} (Unix
	// seconds) and {{.Body}} (the raw body as a string) giving the signed payload
	// ("" = DefaultHMACTemplate).
	Template string
	// Encoding of the MAC: "hex" (the default) or "base64" (standard, padded).
	Encoding string
	// Prefix is written before the encoded MAC, e.g. "sha256=".
	Prefix string
	// TimestampHeader, when set, carries the timestamp (Unix seconds); Verify then bounds
	// its age. A template that uses {{.Timestamp}} needs it; one that does not leaves the
	// timestamp unsigned, so anyone can refresh it.
	TimestampHeader string
	// IDHeader, when set, carries the event id. A template that uses {{.ID}} needs it: the
	// verifier must read the id that was signed.
	IDHeader string
}

// hmacData is what the template sees.
type hmacData struct {
	ID        string
	Timestamp int64
	Body      string
}

// hmacCodec is the hmac scheme bound to a key.
type hmacCodec struct {
	key  []byte
	cfg  HMACConfig
	tmpl *template.Template
}

var _ codec = (*hmacCodec)(nil)

// newHMACCodec checks the configuration and compiles its template.
func newHMACCodec(key []byte, hc *HMACConfig) (*hmacCodec, error) {
	if hc == nil || strings.TrimSpace(hc.Header) == "" {
		return nil, fmt.Errorf("webhook: scheme hmac: the signature header (HMACConfig.Header) is required")
	}
	cfg := *hc
	if cfg.Template == "" {
		cfg.Template = DefaultHMACTemplate
	}
	switch cfg.Encoding {
	case "":
		cfg.Encoding = "hex"
	case "hex", "base64":
	default:
		return nil, fmt.Errorf("webhook: hmac encoding: unknown encoding %q (known: hex, base64)", cfg.Encoding)
	}
	tmpl, err := template.New("hmac").Parse(cfg.Template)
	if err != nil {
		return nil, fmt.Errorf("webhook: hmac template: %v", err)
	}
	c := &hmacCodec{key: key, cfg: cfg, tmpl: tmpl}
	return c, c.checkTemplate()
}

// checkTemplate runs the template on sample data, and checks that the id and the timestamp
// it signs reach the verifier: a part of the payload changes it only if the template uses it.
func (c *hmacCodec) checkTemplate() error {
	base := hmacData{ID: "evt_a", Timestamp: 1, Body: "{}"}
	out, err := c.payload(base)
	if err != nil {
		return fmt.Errorf("webhook: hmac template: %v (known: .ID, .Timestamp, .Body)", err)
	}
	otherID, otherTS := base, base
	otherID.ID, otherTS.Timestamp = "evt_b", 2
	if p, _ := c.payload(otherID); !bytes.Equal(p, out) && c.cfg.IDHeader == "" {
		return fmt.Errorf("webhook: hmac template uses {{.ID}}: set HMACConfig.IDHeader, the header the id is sent in")
	}
	if p, _ := c.payload(otherTS); !bytes.Equal(p, out) && c.cfg.TimestampHeader == "" {
		return fmt.Errorf("webhook: hmac template uses {{.Timestamp}}: set HMACConfig.TimestampHeader, the header it is sent in")
	}
	return nil
}

// payload renders the signed payload.
func (c *hmacCodec) payload(d hmacData) ([]byte, error) {
	var b bytes.Buffer
	if err := c.tmpl.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// mac is the MAC of the rendered payload.
func (c *hmacCodec) mac(d hmacData) ([]byte, error) {
	p, err := c.payload(d)
	if err != nil {
		return nil, fmt.Errorf("webhook: hmac template: %v", err)
	}
	return macSHA256(c.key, p), nil
}

func (c *hmacCodec) encode(mac []byte) string {
	if c.cfg.Encoding == "base64" {
		return base64.StdEncoding.EncodeToString(mac)
	}
	return hex.EncodeToString(mac)
}

func (c *hmacCodec) decode(s string) ([]byte, error) {
	if c.cfg.Encoding == "base64" {
		return base64.StdEncoding.DecodeString(s)
	}
	return hex.DecodeString(s)
}

func (c *hmacCodec) sign(id string, ts time.Time, body []byte) (http.Header, error) {
	mac, err := c.mac(hmacData{ID: id, Timestamp: ts.Unix(), Body: string(body)})
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(c.cfg.Header, c.cfg.Prefix+c.encode(mac))
	if c.cfg.TimestampHeader != "" {
		h.Set(c.cfg.TimestampHeader, strconv.FormatInt(ts.Unix(), 10))
	}
	if c.cfg.IDHeader != "" {
		h.Set(c.cfg.IDHeader, id)
	}
	return h, nil
}

func (c *hmacCodec) verify(h http.Header, body []byte) (time.Time, error) {
	d, err := c.signedData(h, body)
	if err != nil {
		return time.Time{}, err
	}
	value := trimmedHeader(h, c.cfg.Header)
	if value == "" {
		return time.Time{}, missing(SchemeHMAC, c.cfg.Header)
	}
	enc, ok := strings.CutPrefix(value, c.cfg.Prefix)
	if !ok {
		return time.Time{}, bad(SchemeHMAC, "%s does not start with %q", c.cfg.Header, c.cfg.Prefix)
	}
	want, err := c.mac(d)
	if err != nil {
		return time.Time{}, err
	}
	if got, err := c.decode(enc); err != nil || !hmac.Equal(got, want) {
		return time.Time{}, bad(SchemeHMAC, "the %s MAC in %s does not match", c.cfg.Encoding, c.cfg.Header)
	}
	if c.cfg.TimestampHeader == "" {
		return time.Time{}, nil
	}
	return time.Unix(d.Timestamp, 0), nil
}

// signedData reads the id and the timestamp that were signed from their headers.
func (c *hmacCodec) signedData(h http.Header, body []byte) (hmacData, error) {
	d := hmacData{Body: string(body)}
	if name := c.cfg.IDHeader; name != "" {
		if d.ID = trimmedHeader(h, name); d.ID == "" {
			return d, missing(SchemeHMAC, name)
		}
	}
	if name := c.cfg.TimestampHeader; name != "" {
		value := trimmedHeader(h, name)
		if value == "" {
			return d, missing(SchemeHMAC, name)
		}
		sec, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return d, bad(SchemeHMAC, "%s %q is not Unix seconds", name, value)
		}
		d.Timestamp = sec
	}
	return d, nil
}

func (c *hmacCodec) hasTimestamp() bool { return c.cfg.TimestampHeader != "" }
