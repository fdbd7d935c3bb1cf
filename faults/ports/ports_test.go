//go:build unix

package ports

import (
	"net"
	"testing"
)

func TestReservationKeepsThePortForItsProcess(t *testing.T) {
	r, err := Reserve(2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addrs := r.Addrs()
	if len(addrs) != 2 || addrs[0] == addrs[1] {
		t.Fatalf("Addrs() = %v, want two distinct addresses", addrs)
	}
	addr := addrs[0]
	// Nobody else can listen on it: a listener without SO_REUSEPORT (Go's default) is refused.
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("a plain listener took the reserved port %s", addr)
	}
	// Its process can, once and again after it closed (a restart).
	for round := range 2 {
		ln, err := Listen(addr, true)
		if err != nil {
			t.Fatalf("round %d: Listen(%s, reuse) = %v", round, addr, err)
		}
		done := make(chan error, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				c.Close()
			}
			done <- err
		}()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("round %d: dial the process: %v", round, err)
		}
		c.Close()
		if err := <-done; err != nil {
			t.Fatalf("round %d: accept: %v", round, err)
		}
		ln.Close()
		// Between two starts nothing listens: a connection is refused, never queued.
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Fatalf("round %d: a connection to the reserved port was accepted with no process listening", round)
		}
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Fatalf("round %d: a plain listener took the port between two starts", round)
		}
	}
	// Port 0 never hands it out while reserved.
	for range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := ln.Addr().String()
		ln.Close()
		if got == addrs[0] || got == addrs[1] {
			t.Fatalf("a listener on port 0 got the reserved %s", got)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("after Close the port is still held: %v", err)
	}
	ln.Close()
}
