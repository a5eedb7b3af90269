package harness

import (
	"os"

	"golang.org/x/sys/unix"
)

// Uncache drops the file's pages from the page cache, so that the next
// process that maps it reads it from disk as a deployed binary is read.
// A binary the linker has just written is cached in large folios, and a
// process that maps it is charged whole folios: its RssFile then counts
// most of the binary (up to every page of it) whatever it touches, and
// idle RSS would measure the build rather than the program. Errors are
// ignored: the measurement is then only less repeatable.
func Uncache(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
