package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
)

// Warm opens n keep-alive connections to baseURL before they are needed, so
// that a burst released later does not pay for dialing. It sends n GETs of
// path concurrently and holds each on its connection until all n have one,
// so that no two share a connection. The GETs are not recorded in the
// History. n may not exceed Options.MaxIdleConnsPerHost; the whole warm-up
// is bounded by ctx and Options.Timeout.
func (c *Client) Warm(ctx context.Context, baseURL, path string, n int) error {
	if n <= 0 {
		return nil
	}
	if n > c.opts.MaxIdleConnsPerHost {
		return fmt.Errorf("warm %d connections: more than MaxIdleConnsPerHost (%d) would be closed at once; raise it", n, c.opts.MaxIdleConnsPerHost)
	}
	url := strings.TrimRight(baseURL, "/") + "/" + strings.TrimLeft(path, "/")
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()

	var (
		mu   sync.Mutex
		left = n
		all  = make(chan struct{}) // closed once every GET has a connection or has failed
	)
	arrived := func() {
		mu.Lock()
		defer mu.Unlock()
		if left--; left == 0 {
			close(all)
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.warmOne(ctx, url, sync.OnceFunc(arrived), all)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("warm %d connections to %s: %w", n, url, err)
	}
	return nil
}

// warmOne sends one warm-up GET; once it holds a connection it calls
// arrived and waits for all to close before sending.
func (c *Client) warmOne(ctx context.Context, url string, arrived func(), all <-chan struct{}) error {
	defer arrived() // in case no connection was ever obtained
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		arrived()
		select {
		case <-all:
		case <-ctx.Done():
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", UserAgent)
	setOnceBody(req, nil)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, c.opts.MaxBody)); err != nil {
		return fmt.Errorf("reading the response: %w", err)
	}
	if resp.Close {
		return fmt.Errorf("%s answered with \"Connection: close\": its connection cannot be kept", url)
	}
	return nil
}
