package faults

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Received is one webhook event an API delivered to the harness's receiver.
type Received struct {
	// At is when it arrived.
	At time.Time
	// Path is the request's URL path.
	Path string
	// Header and Body are the request's.
	Header http.Header
	Body   []byte
}

// EventReceiver is the harness's webhook receiver for the events an API publishes over HTTP
// (an operation's publishes[].webhook): it answers every POST with 204 once it has read the
// body, and hands each delivery to its handler. Like the downstream sink it is a server the
// harness runs on 127.0.0.1; unlike the sink it performs no effect: it only observes. In a chain
// it also passes each delivery on to the consumer (PassOn) and answers the API as the consumer
// answered it.
type EventReceiver struct {
	server *http.Server
	url    string
	served chan struct{}
	handle func(Received)
	hc     *http.Client // passes deliveries on

	mu      sync.Mutex
	stopped bool
	passOn  string              // where deliveries go on ("" = nowhere)
	onPass  func(Received, int) // told how the consumer answered each (nil = nobody)
	busy    sync.WaitGroup
	once    sync.Once
}

// passOnTimeout bounds one delivery passed on to the consumer (the API's own client usually
// gives up sooner: its relay delivers again).
const passOnTimeout = 30 * time.Second

// hopByHop are the headers a delivery passed on does not carry (RFC 9110 7.6.1, and what the
// new request sets itself).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Content-Length", "Host", "Accept-Encoding"}

// NewEventReceiver starts a receiver on listen (host:port; "" = 127.0.0.1 on any free port)
// that calls handle with every delivery, from the request's goroutine.
func NewEventReceiver(listen string, handle func(Received)) (*EventReceiver, error) {
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("event receiver: listen on %s: %w", listen, err)
	}
	r := &EventReceiver{url: "http://" + ln.Addr().String(), served: make(chan struct{}), handle: handle,
		hc: &http.Client{Timeout: passOnTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	r.server = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.served)
		_ = r.server.Serve(ln)
	}()
	return r, nil
}

// URL is the receiver's base URL, e.g. http://127.0.0.1:41234: an API may deliver to any path
// under it.
func (r *EventReceiver) URL() string { return r.url }

// PassOn makes the receiver pass every later delivery on to url (the consumer's webhook
// endpoint): the body and the request's end-to-end headers as they came (Content-Type, the
// signature's webhook-id, webhook-timestamp and webhook-signature, Event-Id), and answer the API
// with the consumer's status, Retry-After and body, or 502 when the consumer gave no answer. A
// delivery the consumer did not take is thus the API's to deliver again: its webhook's
// redelivery. answered (nil = none) is told each delivery passed on and the consumer's status
// (0 when it gave none), after the API's handler. "" stops passing deliveries on (the receiver
// answers 204 again).
func (r *EventReceiver) PassOn(url string, answered func(Received, int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.passOn, r.onPass = url, answered
}

// serve reads one delivery, hands it over and answers 204, or as the consumer answered when it
// passes deliveries on (405 to anything but a POST, 400 to a body that could not be read).
func (r *EventReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "events are POSTed", http.StatusMethodNotAllowed)
		return
	}
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		http.Error(w, "event receiver closed", http.StatusServiceUnavailable)
		return
	}
	r.busy.Add(1)
	to, onPass := r.passOn, r.onPass
	r.mu.Unlock()
	defer r.busy.Done()
	body, err := io.ReadAll(io.LimitReader(req.Body, maxSinkBody))
	if err != nil {
		http.Error(w, "reading the event: "+err.Error(), http.StatusBadRequest)
		return
	}
	got := Received{At: time.Now(), Path: req.URL.Path, Header: req.Header.Clone(), Body: body}
	r.handle(got)
	if to == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	status := r.forward(w, req, to, body)
	if onPass != nil {
		onPass(got, status)
	}
}

// forward passes one delivery on to the consumer at to, answers as it answered, and returns
// the consumer's status (0 when it gave none).
func (r *EventReceiver) forward(w http.ResponseWriter, req *http.Request, to string, body []byte) int {
	out, err := http.NewRequestWithContext(req.Context(), http.MethodPost, to, bytes.NewReader(body))
	if err != nil {
		http.Error(w, "passing the event on: "+err.Error(), http.StatusBadGateway)
		return 0
	}
	out.GetBody = nil // a retry is the API's, never the transport's
	out.Header = req.Header.Clone()
	for _, h := range hopByHop {
		out.Header.Del(h)
	}
	resp, err := r.hc.Do(out)
	if err != nil {
		http.Error(w, "passing the event on to the consumer: "+err.Error(), http.StatusBadGateway)
		return 0
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxSinkBody))
	if err != nil {
		http.Error(w, "reading the consumer's answer: "+err.Error(), http.StatusBadGateway)
		return 0
	}
	for _, h := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
	return resp.StatusCode
}

// Close stops listening, closes every connection and waits for the deliveries being handled.
func (r *EventReceiver) Close() error {
	var err error
	r.once.Do(func() {
		r.mu.Lock()
		r.stopped = true
		r.mu.Unlock()
		err = r.server.Close()
		<-r.served
		r.busy.Wait()
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	})
	return err
}
