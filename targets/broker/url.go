package broker

import "net/url"

// redactURL returns u with its password replaced, for error messages.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}
