//go:build linux || darwin

package host

import "syscall"

// diskSpace is the total size and the space available to this user of the
// filesystem holding path.
func diskSpace(path string) (total, free uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	bs := uint64(st.Bsize)
	return st.Blocks * bs, st.Bavail * bs, nil
}
