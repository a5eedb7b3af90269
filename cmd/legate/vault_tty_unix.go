//go:build linux || darwin || freebsd

package main

import (
	"context"
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := termios(f.Fd())
	return err == nil
}

func termios(fd uintptr) (*syscall.Termios, error) {
	var t syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlGetTermios, uintptr(unsafe.Pointer(&t))); errno != 0 {
		return nil, errno
	}
	return &t, nil
}

func setTermios(fd uintptr, t *syscall.Termios) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlSetTermios, uintptr(unsafe.Pointer(t))); errno != 0 {
		return errno
	}
	return nil
}

// readNoEcho reads one line from the terminal f with echo off, restoring
// the terminal after. Cancelling ctx (Ctrl-C) gives up the read.
func readNoEcho(ctx context.Context, f *os.File) ([]byte, error) {
	fd := f.Fd()
	old, err := termios(fd)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= syscall.ECHO
	t.Lflag |= syscall.ICANON | syscall.ISIG
	t.Iflag |= syscall.ICRNL
	if err := setTermios(fd, &t); err != nil {
		return nil, err
	}
	defer setTermios(fd, old)

	type result struct {
		line []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var line []byte
		var b [1]byte
		for {
			n, err := f.Read(b[:])
			if n == 1 && b[0] != '\n' {
				line = append(line, b[0])
				continue
			}
			if n == 1 || len(line) > 0 && err != nil {
				done <- result{line, nil}
				return
			}
			if err != nil {
				done <- result{nil, err}
				return
			}
		}
	}()
	select {
	case r := <-done:
		return r.line, r.err
	case <-ctx.Done():
		return nil, errors.New("interrupted; nothing stored")
	}
}
