package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
)

// Settings of the reference API that `run` starts by itself: short enough that the expiry
// property runs within --max-wait.
const (
	selfRetention   = "4s"
	selfLockTimeout = "3s"
)

// startReference starts `retrysafe serve` as a subprocess on a free port and returns the
// embedded reference target file pointed at it.
func startReference(ctx context.Context, procs *faults.Processes, store string) (*targets.Target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p, err := procs.Start("reference API", []string{self, "serve", "--addr", "127.0.0.1:0", "--store", store,
		"--retention", selfRetention, "--lock-timeout", selfLockTimeout}, nil)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	url, err := p.WaitListening(wctx)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{
		"RETRYSAFE_URL":          url,
		"RETRYSAFE_RETENTION":    selfRetention,
		"RETRYSAFE_LOCK_TIMEOUT": selfLockTimeout,
	}
	return targets.Parse("reference.yaml (embedded)", examples.Reference, func(name string) (string, bool) {
		if v, ok := vars[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	})
}

// checkReachable makes sure every instance answers HTTP before any property runs.
func checkReachable(ctx context.Context, t *targets.Target) error {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: t.TLSConfig()},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	for _, in := range t.Instances {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.URL.String(), nil)
		resp, err := hc.Do(req)
		cancel()
		if err != nil {
			return fmt.Errorf("target %s is unreachable: %v", in.URL.Redacted(), err)
		}
		resp.Body.Close()
	}
	return nil
}
