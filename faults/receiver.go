package faults

import (
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
// harness runs on 127.0.0.1; unlike the sink it performs no effect: it only observes.
type EventReceiver struct {
	server *http.Server
	url    string
	served chan struct{}
	handle func(Received)

	mu      sync.Mutex
	stopped bool
	busy    sync.WaitGroup
	once    sync.Once
}

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
	r := &EventReceiver{url: "http://" + ln.Addr().String(), served: make(chan struct{}), handle: handle}
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

// serve reads one delivery, hands it over and answers 204 (405 to anything but a POST, 400 to a
// body that could not be read).
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
	r.mu.Unlock()
	defer r.busy.Done()
	body, err := io.ReadAll(io.LimitReader(req.Body, maxSinkBody))
	if err != nil {
		http.Error(w, "reading the event: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.handle(Received{At: time.Now(), Path: req.URL.Path, Header: req.Header.Clone(), Body: body})
	w.WriteHeader(http.StatusNoContent)
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
