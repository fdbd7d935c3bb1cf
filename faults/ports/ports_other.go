//go:build !unix

package ports

import (
	"net"
	"syscall"
)

// reserve picks a port that was free: without SO_REUSEPORT nothing can hold it for the process.
func reserve() (string, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, func() error { return nil }, nil
}

func reusePortControl(string, string, syscall.RawConn) error { return nil }
