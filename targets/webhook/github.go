package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// GitHubSignaturePrefix starts X-Hub-Signature-256.
const GitHubSignaturePrefix = "sha256="

// githubCodec is GitHub's scheme: X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of body>.
// Nothing signed carries a time, so a captured delivery verifies forever; Sign also sets
// X-GitHub-Delivery to the event id, as GitHub does.
type githubCodec struct{ key []byte }

var _ codec = githubCodec{}

func (c githubCodec) sign(id string, _ time.Time, body []byte) (http.Header, error) {
	h := http.Header{}
	h.Set(HeaderGitHubSignature, GitHubSignaturePrefix+hex.EncodeToString(macSHA256(c.key, body)))
	if id != "" {
		h.Set(HeaderGitHubDelivery, id)
	}
	return h, nil
}

func (c githubCodec) verify(h http.Header, body []byte) (time.Time, error) {
	value := trimmedHeader(h, HeaderGitHubSignature)
	if value == "" {
		return time.Time{}, missing(SchemeGitHub, HeaderGitHubSignature)
	}
	digest, ok := strings.CutPrefix(value, GitHubSignaturePrefix)
	if !ok {
		return time.Time{}, bad(SchemeGitHub, "%s does not start with %s", HeaderGitHubSignature, GitHubSignaturePrefix)
	}
	got, err := hex.DecodeString(digest)
	if err != nil || !hmac.Equal(got, macSHA256(c.key, body)) {
		return time.Time{}, bad(SchemeGitHub, "the sha256 digest does not match the body")
	}
	return time.Time{}, nil
}

func (githubCodec) hasTimestamp() bool { return false }
