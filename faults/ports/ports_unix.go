//go:build unix

package ports

import (
	"fmt"
	"net"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// reserve binds a socket to 127.0.0.1:0 with SO_REUSEPORT only (not SO_REUSEADDR, which would
// let any listener share it) and does not listen on it.
func reserve() (string, func() error, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("reserve a port: %w", err)
	}
	fail := func(step string, err error) (string, func() error, error) {
		syscall.Close(fd)
		return "", nil, fmt.Errorf("reserve a port: %s: %w", step, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		return fail("SO_REUSEPORT", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		return fail("getsockname", fmt.Errorf("not an IPv4 address: %T", sa))
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(in.Port))
	return addr, func() error { return syscall.Close(fd) }, nil
}

// reusePortControl sets SO_REUSEPORT on a socket before it binds.
func reusePortControl(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); err != nil {
		return err
	}
	return serr
}
