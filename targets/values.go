package targets

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// duration returns the named field as a positive duration (Go syntax plus a "d" day unit).
func (d *decoder) duration(o *object, name string) (time.Duration, bool) {
	s, ok := d.str(o, name)
	if !ok {
		return 0, false
	}
	v, err := parseDuration(s)
	if err != nil {
		d.ps.add(o.lineOf(name), o.at(name), "%v", err)
		return 0, false
	}
	return v, true
}

// parseDuration parses a positive Go duration, also accepting a leading whole-day part ("7d", "1d12h").
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(t, 'd'); i > 0 {
		n, err := strconv.Atoi(t[:i])
		if err == nil && n >= 0 && n < 100000 {
			days, t = time.Duration(n)*24*time.Hour, t[i+1:]
		}
	}
	v := time.Duration(0)
	if t != "" {
		var err error
		if v, err = time.ParseDuration(t); err != nil {
			return 0, fmt.Errorf("bad duration %q (write it like 500ms, 30s, 5m, 24h or 7d)", s)
		}
	}
	if v+days <= 0 {
		return 0, fmt.Errorf("bad duration %q: must be greater than zero", s)
	}
	return v + days, nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// expandEnv replaces ${NAME} and ${NAME:-default} using env. "$${" stands for a literal "${". A
// "$" not followed by "{" is kept as is (JSONPath "$.count" and SQL "$1" need no escaping). It
// returns one message per malformed reference, and the variables that are unset without a
// default apart; with standIn each of those is replaced by <NAME> (retrysafe validate checks a
// file before its environment is set), else by nothing.
func expandEnv(s string, env func(string) (string, bool), standIn bool) (out string, errs, unset []string) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				errs = append(errs, fmt.Sprintf("unterminated ${ in %q (write ${NAME} or ${NAME:-default}; $${ for a literal ${)", s))
				return s, errs, unset
			}
			ref := s[i+2 : i+end]
			name, def, hasDef := strings.Cut(ref, ":-")
			if !validEnvName(name) {
				errs = append(errs, fmt.Sprintf("bad environment reference ${%s} (write ${NAME} or ${NAME:-default})", ref))
			} else if v, ok := env(name); ok && (v != "" || !hasDef) {
				b.WriteString(v)
			} else if hasDef {
				b.WriteString(def)
			} else {
				unset = append(unset, name)
				if standIn {
					b.WriteString("<" + name + ">")
				}
			}
			i += end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), errs, unset
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// suggest returns ` (did you mean "x"?)` when a known name is close to key.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if dist := EditDistance(strings.ToLower(key), k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// EditDistance is the Levenshtein distance of a and b, in bytes: what every "did you mean"
// (the loader's, the CLI's) measures.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
