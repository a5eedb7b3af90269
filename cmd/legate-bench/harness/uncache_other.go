//go:build !linux

package harness

// Uncache does nothing here: P4 reads RSS from /proc, on Linux only.
func Uncache(path string) {}
