package httpclient_test

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// rawServer is a TCP server on 127.0.0.1 that hands each connection to
// serve, for behaviour net/http's server will not produce.
type rawServer struct {
	URL      string
	accepted atomic.Int64

	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// startRaw starts a rawServer; it is stopped, and its connections closed,
// when the test ends.
func startRaw(t *testing.T, serve func(conn net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{URL: "http://" + ln.Addr().String(), ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			s.mu.Lock()
			s.conns = append(s.conns, conn)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer conn.Close()
				serve(conn, bufio.NewReader(conn))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}
