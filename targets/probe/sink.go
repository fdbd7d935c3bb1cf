package probe

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// sinkMode is how the downstream sink answers.
type sinkMode int

const (
	sinkPass sinkMode = iota // 200 at once
	sinkHold                 // hold every call until released
	sinkFail                 // 500 at once
)

// sink is the probe's downstream provider: the target declares that it calls it (downstream
// with a fixed listen address). Holding its answer holds the target's request in flight;
// failing it makes the target's request fail after it started work.
type sink struct {
	srv *http.Server

	mu      sync.Mutex
	mode    sinkMode
	calls   int
	arrived chan struct{} // one value per call while holding
	release chan struct{} // closed to release held calls
}

// startSink listens on addr and serves until close.
func startSink(addr string) (*sink, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &sink{}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// ServeHTTP answers one downstream call according to the mode.
func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	s.calls++
	mode, arrived, release := s.mode, s.arrived, s.release
	s.mu.Unlock()
	switch mode {
	case sinkFail:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"failure induced by retrysafe probe"}`)
		return
	case sinkHold:
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`)
}

// hold makes the sink hold every call from now on; the channel receives one value per call.
func (s *sink) hold() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = sinkHold
	s.arrived = make(chan struct{}, 16)
	s.release = make(chan struct{})
	return s.arrived
}

// set switches to pass or fail, releasing held calls.
func (s *sink) set(m sinkMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == sinkHold {
		close(s.release)
	}
	s.mode = m
}

// count returns how many calls the sink received.
func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// close stops the sink, releasing held calls.
func (s *sink) close() {
	s.set(sinkPass)
	s.srv.Close()
}
