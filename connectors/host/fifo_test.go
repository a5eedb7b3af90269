package host_test

import (
	"syscall"
	"time"
)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

func sleepBriefly() { time.Sleep(100 * time.Millisecond) }
