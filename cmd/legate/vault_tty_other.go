//go:build !linux && !darwin && !freebsd

package main

import (
	"context"
	"errors"
	"os"
)

// isTerminal reports false here: on this system legate cannot turn echo
// off, so `legate vault set` reads standard input as it is (pipe the value
// in; typed at a console, it would show, ending with the end-of-file key).
func isTerminal(*os.File) bool { return false }

func readNoEcho(context.Context, *os.File) ([]byte, error) {
	return nil, errors.New("no terminal support on this system; pipe the value in")
}
