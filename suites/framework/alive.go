package framework

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Alive asks instance i whether it still answers, as the lifecycle's readiness probe does: GET
// its ready path (a 2xx wanted) where the lifecycle declares one, else its base URL (any HTTP
// answer). It returns why it does not, or "".
func (s *S) Alive(i int) string {
	in := s.Instance(i)
	u, want2xx := in.URL.String(), false
	if l := s.Target.Lifecycle; l != nil && l.Ready != nil && l.Ready.Path != "" {
		u, want2xx = strings.TrimSuffix(u, "/")+"/"+strings.TrimPrefix(l.Ready.Path, "/"), true
	}
	ctx, cancel := context.WithTimeout(s.Ctx(), s.Settings.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := s.Observer.Do(req)
	if err != nil {
		return fmt.Sprintf("GET %s got no answer: %s", s.History.Redactor().URL(u), s.History.Redactor().String(err.Error()))
	}
	resp.Body.Close()
	if want2xx && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		return fmt.Sprintf("GET %s (its ready path) got %d", s.History.Redactor().URL(u), resp.StatusCode)
	}
	return ""
}
