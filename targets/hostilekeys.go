package targets

import "strings"

// HostileKey is an idempotency key made to break an API that uses the raw header value as a
// store key: one that contains a separator, a wildcard, a path step, a percent sign, a letter
// outside ASCII, a control character or padding, one 8 KB long, one that is another key of the
// run behind a tenant or namespace separator, one that is a store's command word. Hostile keys
// are made from the run's own keys (KeyFormat.Make), so that --key makes them again, and are
// recorded and redacted like every other key.
type HostileKey struct {
	// What says what the key is, for sentences: "a key with ':'".
	What string
	// Key is the key as it is sent (bare).
	Key string
	// Raw means net/http refuses to send it in a header (a control character): the harness
	// writes that request itself.
	Raw bool
	// Of means the key is built on another key of the run, whose request it is sent with (the
	// same body): an API that takes it for that key replays that key's answer.
	Of bool
}

// HostileKeyLength is the length of the long hostile key: 8 KB.
const HostileKeyLength = 8 << 10

// HostileKeys returns the hostile keys of one spec: those that contain something, each built on
// a fresh key of the run (fresh is called once per key, so that a parser that strips padding
// spaces, say, is never taken for a collision), and those built on other, a key of the run that
// tenant already used.
func HostileKeys(fresh func() string, other, tenant string) []HostileKey {
	pad := func(k string) string { return k + "-" + strings.Repeat("k", max(0, HostileKeyLength-len(k)-1)) }
	out := []HostileKey{
		{What: "a key with ':'", Key: fresh() + ":part"},
		{What: "a key with '/'", Key: fresh() + "/part"},
		{What: "a key with '*'", Key: fresh() + "*"},
		{What: "a key with '..'", Key: "../" + fresh() + "/.."},
		{What: "a key with '%'", Key: fresh() + "%25%"},
		{What: "a key with a letter outside ASCII", Key: fresh() + "-é"},
		{What: "a key with a control character", Key: fresh() + "\x01x", Raw: true},
		{What: "a key with a leading space", Key: " " + fresh()},
		{What: "a key with a trailing space", Key: fresh() + " "},
		{What: "a key of 8 KB", Key: pad(fresh())},
		{What: "a store's command word as a key", Key: "FLUSHALL"},
	}
	if tenant != "" {
		out = append(out, HostileKey{What: "another key of the run behind its tenant (" + tenant + ":KEY)", Key: tenant + ":" + other, Of: true})
	}
	return append(out,
		HostileKey{What: "another key of the run behind a namespace (idempotency:KEY)", Key: "idempotency:" + other, Of: true},
		HostileKey{What: "another key of the run as a glob (KEY*)", Key: other + "*", Of: true},
		HostileKey{What: "another key of the run as a LIKE pattern (KEY%)", Key: other + "%", Of: true},
	)
}
