//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// links is the hard-link count of a file, when the system says.
func links(st fs.FileInfo) (uint64, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink), true
	}
	return 0, false
}
